// libinotifytools keeps process-wide state and is not thread-safe: only
// ChangeWatcher's own thread may call into it.
#include <inotifytools/inotifytools.h>
#include <inotifytools/inotify.h>
