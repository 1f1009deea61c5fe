// Linux system calls that glibc has no wrapper for, and Swift cannot call
// through the variadic syscall(2).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

// openat2(2) with RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH: opens the folder
// `path` below `folder` in one call, refusing a symbolic link anywhere on
// the way and any escape from `folder`. -1 with errno set on failure
// (ENOSYS before Linux 5.6).
static inline int CLinuxCalls_openFolderBeneath(int folder, const char *path) {
#ifdef SYS_openat2
    struct open_how how = {
        .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH,
    };
    return (int)syscall(SYS_openat2, folder, path, &how, sizeof how);
#else
    errno = ENOSYS;
    return -1;
#endif
}
