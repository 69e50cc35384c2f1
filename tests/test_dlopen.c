/* SPDX-License-Identifier: MIT */
/*
 * The shared library works when dlopen()ed after startup, as a simulator's
 * plugin loader would load it. It is built with initial-exec thread-locals
 * (CMakeLists.txt), which then come from glibc's static TLS surplus; this
 * checks that they do, in the main thread and in threads started after the
 * load, by mapping, translating and unmapping through the loaded copy.
 *
 * Usage: test_dlopen PATH-TO-libiopgtable.so
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <iopgtable/pgtable.h>

static struct {
	int (*alloc)(const struct iopt_pgtable_cfg *, struct iopt_pgtable **);
	void (*free)(struct iopt_pgtable *);
	int (*map)(struct iopt_pgtable *, uint64_t, uint64_t, uint64_t, size_t,
		   unsigned, uint64_t *);
	int64_t (*unmap)(struct iopt_pgtable *, uint64_t, uint64_t, size_t,
			 struct iopt_pgtable_gather *);
	int (*to_phys)(struct iopt_pgtable *, uint64_t, uint64_t *);
} lib;

static struct iopt_pgtable *pt;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
			return 1;					\
		}							\
	} while (0)

/* Map 1000 pages at base (each through the leaf-table cache after the
 * first), check each translation, unmap them, check they are gone. */
static int exercise(uint64_t base)
{
	const uint64_t pa_off = 0x100000000ull;
	uint64_t pa;

	for (uint64_t i = 0; i < 1000; i++)
		CHECK(lib.map(pt, base + i * 4096, base + i * 4096 + pa_off, 4096,
			      1, IOPT_READ | IOPT_WRITE, NULL) == 0);
	for (uint64_t i = 0; i < 1000; i++) {
		CHECK(lib.to_phys(pt, base + i * 4096 + 5, &pa) == 0);
		CHECK(pa == base + i * 4096 + 5 + pa_off);
	}
	for (uint64_t i = 0; i < 1000; i++)
		CHECK(lib.unmap(pt, base + i * 4096, 4096, 1, NULL) == 4096);
	for (uint64_t i = 0; i < 1000; i++)
		CHECK(lib.to_phys(pt, base + i * 4096, &pa) != 0);
	return 0;
}

static void *thread_main(void *arg)
{
	return (void *)(intptr_t)exercise((uint64_t)(uintptr_t)arg);
}

int main(int argc, char **argv)
{
	void *h;

	if (argc != 2) {
		fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&lib.alloc = dlsym(h, "iopt_pgtable_alloc");
	*(void **)&lib.free = dlsym(h, "iopt_pgtable_free");
	*(void **)&lib.map = dlsym(h, "iopt_pgtable_map_pages");
	*(void **)&lib.unmap = dlsym(h, "iopt_pgtable_unmap_pages");
	*(void **)&lib.to_phys = dlsym(h, "iopt_pgtable_iova_to_phys");
	CHECK(lib.alloc && lib.free && lib.map && lib.unmap && lib.to_phys);

	struct iopt_pgtable_cfg cfg = { .fmt = IOPT_ARM_64_LPAE_S1, .granule = 4096,
				.ias = 48, .oas = 48, .coherent_walk = true };

	CHECK(lib.alloc(&cfg, &pt) == 0);
	CHECK(exercise(0x40000000) == 0);

	pthread_t th[2];
	void *ret;

	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&th[i], NULL, thread_main,
				     (void *)(uintptr_t)(0x80000000ull * (i + 1))) == 0);
	for (int i = 0; i < 2; i++) {
		CHECK(pthread_join(th[i], &ret) == 0);
		CHECK(ret == NULL);
	}
	lib.free(pt);
	CHECK(dlclose(h) == 0);
	printf("dlopen: %s mapped, translated and unmapped in 3 threads\n",
	       argv[1]);
	return 0;
}
