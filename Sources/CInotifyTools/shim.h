// libinotifytools keeps process-wide state and is not thread-safe: only
// ChangeWatcher's own thread may call into it.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <inotifytools/inotifytools.h>
#include <inotifytools/inotify.h>

// Names the calling thread (15 characters at most, seen in
// /proc/<pid>/task/*/comm). pthread_setname_np is a GNU extension that
// Swift's Glibc module does not export; the watcher thread names itself
// with it, at once, so tools and tests can find it.
static inline int CInotifyTools_nameCurrentThread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
