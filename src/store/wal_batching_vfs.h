// A VFS over SQLite's default one that hands a commit's WAL frames to the kernel in one write.
//
// SQLite writes each WAL frame as two writes, its 24-byte header and then its page, so an
// append of three pages costs six pwrite calls; on a virtual machine a system call costs several
// microseconds, a large share of an append. This VFS keeps contiguous writes to a WAL file in a
// buffer and writes them out at once, never later than SQLite could let anyone read them:
//  - when the page of a commit frame (a header whose "database size" field is set) is written,
//    inside that write call, so a failure fails the commit as it would have;
//  - before any other operation on the WAL file (a read, sync, truncate, size, lock, close) and
//    before a write elsewhere in it;
//  - before the database file's connection touches the WAL index (map, lock, barrier): the
//    index is what tells other connections which frames exist, and the write lock is what keeps
//    another writer off these offsets, so frames never sit in a buffer once it is released.
// Every other file passes straight through.
#pragma once

#include <cstdint>

namespace talaria::store {

// The VFS's name for sqlite3_open_v2, registered (not as the default) on first use.
const char* WalBatchingVfsName();

// Writes the VFS has issued to WAL files in this process, for the store benchmark.
uint64_t WalWritesIssued();

}  // namespace talaria::store
