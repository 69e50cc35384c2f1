/* SPDX-License-Identifier: MIT */
/*
 * Definitions shared by every libiopgtable module.
 *
 * Errors: every function that can fail returns 0 (or a non-negative count)
 * on success and a negative errno value on failure. Each function's comment
 * says whether a failure leaves no effect or reports partial progress.
 *
 * Ranges: [start, end) is half-open; "last" names an inclusive end.
 */
#ifndef IOPGTABLE_COMMON_H
#define IOPGTABLE_COMMON_H

#if defined(IOPT_STATIC_DEFINE)
#define IOPT_API
#elif defined(__GNUC__)
#define IOPT_API __attribute__((visibility("default")))
#else
#define IOPT_API
#endif

#define IOPT_VERSION_MAJOR 0
#define IOPT_VERSION_MINOR 1
#define IOPT_VERSION_PATCH 0

#endif /* IOPGTABLE_COMMON_H */
