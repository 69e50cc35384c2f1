/* SPDX-License-Identifier: MIT */
/*
 * Replays fuzz inputs without libFuzzer: every file named on the command
 * line (directories are read one level deep) goes through the target once.
 * Prints "N passed, 0 failed"; a failing input aborts.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned ran = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st))
			return 1;
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 1;
			ran++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d)
			return 1;
		while ((e = readdir(d))) {
			char p[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", argv[i], e->d_name);
			if (run_file(p)) {
				closedir(d);
				return 1;
			}
			ran++;
		}
		closedir(d);
	}
	printf("%u passed, 0 failed\n", ran);
	return ran ? 0 : 1;
}
