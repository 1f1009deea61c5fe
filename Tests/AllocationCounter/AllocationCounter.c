// Defines malloc and its relatives in the test executable: the dynamic
// linker binds every library's calls (the Swift runtime's, Foundation's) to
// these, which count on the calling thread and hand the work to glibc's own
// entry points, so memory is allocated and freed exactly as without them.
#define _GNU_SOURCE
#include "AllocationCounter.h"
#include <errno.h>
#include <stddef.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define ALLOCATION_COUNTER_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOCATION_COUNTER_SANITIZED 1
#endif

static __thread int counting;
static __thread long counted;

void allocation_counter_start(void) { counted = 0; counting = 1; }
long allocation_counter_stop(void) { counting = 0; return counted; }

#ifdef ALLOCATION_COUNTER_SANITIZED
int allocation_counter_is_available(void) { return 0; }
#else
int allocation_counter_is_available(void) { return 1; }

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static inline void note(void) { if (counting) counted++; }

void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { note(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { note(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
    // What glibc checks: a power of two, a multiple of a pointer's size.
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
    note();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
#endif
