#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H

/// Counts the calling thread's heap allocations (malloc, calloc, realloc,
/// aligned allocations) between a start and a stop, by defining those
/// functions in the test executable over glibc's own. 0 from
/// allocation_counter_is_available() in a sanitized build, whose runtime
/// owns malloc: nothing is counted there.
int allocation_counter_is_available(void);
void allocation_counter_start(void);
/// The calling thread's allocations since its start.
long allocation_counter_stop(void);

#endif
