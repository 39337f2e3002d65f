#ifndef C_MEMORY_STATS_H
#define C_MEMORY_STATS_H

#include <stddef.h>

/// Bytes the C allocator has handed out and not yet taken back (glibc: mallinfo2's arena and mmapped bytes in use);
/// 0 where the allocator does not say.
size_t ocd_benchmark_heap_bytes_in_use(void);

#endif
