/* SPDX-License-Identifier: MIT */
/*
 * The version header, the library and the project version agree.
 *
 * IOPT_EXPECTED_VERSION is the project() version as CMake knows it, passed
 * on the command line: the independent expectation. The header's macros
 * and the library's iopt_version()/iopt_version_number() must all say the
 * same, and the number must order as the fields do. Built twice, against
 * the shared and the static library.
 */
#include <stdio.h>
#include <string.h>

#include <iopgtable/version.h>

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
			return 1;					\
		}							\
	} while (0)

int main(void)
{
	unsigned maj, min, pat;
	char tail;

	CHECK(sscanf(IOPT_EXPECTED_VERSION, "%u.%u.%u%c", &maj, &min, &pat,
		     &tail) == 3);
	CHECK(maj < 256 && min < 256 && pat < 256);
	CHECK(IOPT_VERSION_MAJOR == maj);
	CHECK(IOPT_VERSION_MINOR == min);
	CHECK(IOPT_VERSION_PATCH == pat);
	CHECK(strcmp(IOPT_VERSION_STRING, IOPT_EXPECTED_VERSION) == 0);
	CHECK(IOPT_VERSION_NUMBER == (maj << 16 | min << 8 | pat));
	CHECK(iopt_version() != NULL);
	CHECK(strcmp(iopt_version(), IOPT_EXPECTED_VERSION) == 0);
	CHECK(iopt_version_number() == (maj << 16 | min << 8 | pat));
	/* The encoding orders versions field by field. */
	CHECK(IOPT_VERSION_ENCODE(0, 1, 255) < IOPT_VERSION_ENCODE(0, 2, 0));
	CHECK(IOPT_VERSION_ENCODE(0, 255, 255) < IOPT_VERSION_ENCODE(1, 0, 0));
	printf("test_version: %s\n", iopt_version());
	return 0;
}
