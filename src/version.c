/* SPDX-License-Identifier: MIT */
/*
 * The library's version (include/iopgtable/version.h, generated from the
 * project version in CMakeLists.txt). Compiled into the library, so that a
 * program can tell which build it runs with, whatever headers it used.
 */
#include <iopgtable/version.h>

const char *iopt_version(void)
{
	return IOPT_VERSION_STRING;
}

unsigned iopt_version_number(void)
{
	return IOPT_VERSION_NUMBER;
}
