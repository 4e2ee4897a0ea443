// What the search cores share: the clock of their time budgets, the CPU time of the calling
// thread (the one that searches). A budget counted on a wall clock gives a search fewer
// positions when other work shares the machine, so that whether a deal comes out won, lost
// or unknown would depend on the load; counted in the thread's own CPU time it does not.
// Python's time.thread_time() reads the same clock (CLOCK_THREAD_CPUTIME_ID), so a deadline
// taken there and the seconds a core spends add up.

#pragma once

#if defined(_WIN32)
#include <windows.h>
#else
#include <time.h>
#endif

namespace patience_core {

inline double thread_cpu_seconds() {
#if defined(_WIN32)
    FILETIME created, exited, kernel, user;
    GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user);
    auto ticks = [](const FILETIME& t) {
        return (static_cast<unsigned long long>(t.dwHighDateTime) << 32) | t.dwLowDateTime;
    };
    return static_cast<double>(ticks(kernel) + ticks(user)) * 1e-7;  // 100 ns ticks
#else
    timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
#endif
}

}  // namespace patience_core
