#include "store/wal_batching_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <cstddef>
#include <cstring>

namespace talaria::store {
namespace {

constexpr char kVfsName[] = "talaria-wal-batching";
// A WAL frame header's size; bytes 4-7 hold the database size after a commit, 0 otherwise.
constexpr int kFrameHeaderSize = 24;
// The most one write may carry: the unix VFS writes at most 128 KiB - 1 bytes per call (it
// masks the length), and anything longer comes back as "disk full".
constexpr sqlite3_int64 kMaxWrite = 0x1ffff;

std::atomic<uint64_t> wal_writes{0};

// What SQLite allocates for each open file (szOsFile): this header, then the real file. Plain
// data: SQLite owns the memory and never runs constructors.
struct BatchingFile {
  sqlite3_file base;   // base.pMethods is kBatchingMethods once the real file is open
  sqlite3_file* real;  // the default VFS's file, in the same allocation
  BatchingFile* wal;   // on a database file: its connection's open WAL file, if any
  BatchingFile* db;    // on a WAL file: its connection's database file
  bool is_wal;
  bool commit_pending;    // the buffer ends with a commit frame's header
  unsigned char* buffer;  // sqlite3_malloc'd, kMaxWrite bytes
  sqlite3_int64 buffered;
  sqlite3_int64 offset;  // where buffer[0] goes in the file
};

constexpr size_t kHeaderSize = (sizeof(BatchingFile) + 7) & ~size_t{7};

sqlite3_vfs* RealVfs(sqlite3_vfs* vfs) { return static_cast<sqlite3_vfs*>(vfs->pAppData); }
BatchingFile* Of(sqlite3_file* f) { return reinterpret_cast<BatchingFile*>(f); }
sqlite3_file* Real(sqlite3_file* f) { return Of(f)->real; }
const sqlite3_io_methods* RealMethods(sqlite3_file* f) { return Real(f)->pMethods; }

int Flush(BatchingFile* f) {
  if (f->buffered == 0) return SQLITE_OK;
  const auto size = static_cast<int>(f->buffered);
  f->buffered = 0;
  f->commit_pending = false;
  wal_writes.fetch_add(1, std::memory_order_relaxed);
  return f->real->pMethods->xWrite(f->real, f->buffer, size, f->offset);
}

// Before the WAL index changes hands or becomes visible. Nothing can report an error from here
// (xShmBarrier returns nothing, an unlock's result is ignored), and frames left behind could be
// written later over another writer's: on failure they are dropped. They are not committed
// ones: a commit frame is written inside its own xWrite call, where a failure is reported.
void FlushWalOf(sqlite3_file* db_file) {
  BatchingFile* wal = Of(db_file)->wal;
  if (wal != nullptr) (void)Flush(wal);
}

// One write's worth, allocated at the WAL file's first write.
bool HasBuffer(BatchingFile* f) {
  if (f->buffer == nullptr) f->buffer = static_cast<unsigned char*>(sqlite3_malloc64(kMaxWrite));
  return f->buffer != nullptr;
}

bool IsCommitFrameHeader(const void* data, int amount) {
  if (amount != kFrameHeaderSize) return false;
  const auto* bytes = static_cast<const unsigned char*>(data);
  return (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0;
}

int WalWrite(BatchingFile* f, const void* data, int amount, sqlite3_int64 offset) {
  // The write after a commit frame's header is that frame's page: it completes the commit,
  // whatever the flushes below do to the buffer first.
  const bool completes_commit = f->commit_pending;
  if (f->buffered > 0 && offset != f->offset + f->buffered) {
    const int rc = Flush(f);
    if (rc != SQLITE_OK) return rc;
  }
  if (f->buffered + amount > kMaxWrite) {
    const int rc = Flush(f);
    if (rc != SQLITE_OK) return rc;
  }
  if (amount > kMaxWrite || !HasBuffer(f)) {
    wal_writes.fetch_add(1, std::memory_order_relaxed);
    return f->real->pMethods->xWrite(f->real, data, amount, offset);
  }
  if (f->buffered == 0) f->offset = offset;
  std::memcpy(f->buffer + f->buffered, data, static_cast<size_t>(amount));
  f->buffered += amount;
  if (completes_commit) return Flush(f);
  f->commit_pending = IsCommitFrameHeader(data, amount);
  return SQLITE_OK;
}

// ---- io methods: a WAL file flushes before anything but a write; a database file flushes its
// WAL before the WAL index is touched; the rest is the real file's.

// Writes out what the file holds buffered, then runs the real file's `Method`.
template <auto Method, typename... Args>
int FlushThen(sqlite3_file* file, Args... args) {
  const int rc = Flush(Of(file));
  if (rc != SQLITE_OK) return rc;
  return (RealMethods(file)->*Method)(Real(file), args...);
}

int Close(sqlite3_file* file) {
  BatchingFile* f = Of(file);
  int rc = Flush(f);
  if (f->is_wal && f->db != nullptr) f->db->wal = nullptr;
  if (!f->is_wal && f->wal != nullptr) f->wal->db = nullptr;
  sqlite3_free(f->buffer);
  f->buffer = nullptr;
  const int closed = RealMethods(file)->xClose(Real(file));
  return rc != SQLITE_OK ? rc : closed;
}

int Read(sqlite3_file* file, void* data, int amount, sqlite3_int64 offset) {
  return FlushThen<&sqlite3_io_methods::xRead>(file, data, amount, offset);
}

int Write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  BatchingFile* f = Of(file);
  if (f->is_wal) return WalWrite(f, data, amount, offset);
  return RealMethods(file)->xWrite(Real(file), data, amount, offset);
}

int Truncate(sqlite3_file* file, sqlite3_int64 size) {
  return FlushThen<&sqlite3_io_methods::xTruncate>(file, size);
}

int Sync(sqlite3_file* file, int flags) {
  return FlushThen<&sqlite3_io_methods::xSync>(file, flags);
}

int FileSize(sqlite3_file* file, sqlite3_int64* size) {
  return FlushThen<&sqlite3_io_methods::xFileSize>(file, size);
}

int Lock(sqlite3_file* file, int level) {
  return FlushThen<&sqlite3_io_methods::xLock>(file, level);
}

int Unlock(sqlite3_file* file, int level) {
  return FlushThen<&sqlite3_io_methods::xUnlock>(file, level);
}

int CheckReservedLock(sqlite3_file* file, int* out) {
  return RealMethods(file)->xCheckReservedLock(Real(file), out);
}

int FileControl(sqlite3_file* file, int op, void* arg) {
  return FlushThen<&sqlite3_io_methods::xFileControl>(file, op, arg);
}

int SectorSize(sqlite3_file* file) { return RealMethods(file)->xSectorSize(Real(file)); }

int DeviceCharacteristics(sqlite3_file* file) {
  return RealMethods(file)->xDeviceCharacteristics(Real(file));
}

int ShmMap(sqlite3_file* file, int page, int page_size, int extend, void volatile** out) {
  FlushWalOf(file);
  return RealMethods(file)->xShmMap(Real(file), page, page_size, extend, out);
}

int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
  FlushWalOf(file);
  return RealMethods(file)->xShmLock(Real(file), offset, n, flags);
}

void ShmBarrier(sqlite3_file* file) {
  FlushWalOf(file);
  RealMethods(file)->xShmBarrier(Real(file));
}

int ShmUnmap(sqlite3_file* file, int delete_flag) {
  FlushWalOf(file);
  return RealMethods(file)->xShmUnmap(Real(file), delete_flag);
}

int Fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  return FlushThen<&sqlite3_io_methods::xFetch>(file, offset, amount, out);
}

int Unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  return RealMethods(file)->xUnfetch(Real(file), offset, page);
}

const sqlite3_io_methods kBatchingMethods = {
    3,
    Close,
    Read,
    Write,
    Truncate,
    Sync,
    FileSize,
    Lock,
    Unlock,
    CheckReservedLock,
    FileControl,
    SectorSize,
    DeviceCharacteristics,
    ShmMap,
    ShmLock,
    ShmBarrier,
    ShmUnmap,
    Fetch,
    Unfetch,
};

int Open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  BatchingFile* f = Of(file);
  std::memset(f, 0, kHeaderSize);
  f->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + kHeaderSize);
  sqlite3_vfs* real = RealVfs(vfs);
  const int rc = real->xOpen(real, name, f->real, flags, out_flags);
  // SQLite closes a file only if its methods are set; they follow the real file's.
  if (f->real->pMethods == nullptr) return rc;
  // The real file's methods must have what ours forward to (the unix VFS's are version 3).
  if (f->real->pMethods->iVersion < 3) {
    f->real->pMethods->xClose(f->real);
    return SQLITE_CANTOPEN;
  }
  f->base.pMethods = &kBatchingMethods;
  if ((flags & SQLITE_OPEN_WAL) != 0 && name != nullptr) {
    f->is_wal = true;
    // The database file of the connection this WAL belongs to (SQLite gives a WAL the name's
    // storage of its pager), to flush before that connection touches the WAL index.
    sqlite3_file* db_file = sqlite3_database_file_object(name);
    if (db_file != nullptr && db_file->pMethods == &kBatchingMethods) {
      f->db = Of(db_file);
      f->db->wal = f;
    }
  }
  return rc;
}

int Delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  return RealVfs(vfs)->xDelete(RealVfs(vfs), name, sync_dir);
}
int Access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  return RealVfs(vfs)->xAccess(RealVfs(vfs), name, flags, out);
}
int FullPathname(sqlite3_vfs* vfs, const char* name, int size, char* out) {
  return RealVfs(vfs)->xFullPathname(RealVfs(vfs), name, size, out);
}
void* DlOpen(sqlite3_vfs* vfs, const char* name) {
  return RealVfs(vfs)->xDlOpen(RealVfs(vfs), name);
}
void DlError(sqlite3_vfs* vfs, int size, char* out) {
  RealVfs(vfs)->xDlError(RealVfs(vfs), size, out);
}
void (*DlSym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void) {
  return RealVfs(vfs)->xDlSym(RealVfs(vfs), handle, symbol);
}
void DlClose(sqlite3_vfs* vfs, void* handle) { RealVfs(vfs)->xDlClose(RealVfs(vfs), handle); }
int Randomness(sqlite3_vfs* vfs, int size, char* out) {
  return RealVfs(vfs)->xRandomness(RealVfs(vfs), size, out);
}
int Sleep(sqlite3_vfs* vfs, int micros) { return RealVfs(vfs)->xSleep(RealVfs(vfs), micros); }
int CurrentTime(sqlite3_vfs* vfs, double* out) {
  return RealVfs(vfs)->xCurrentTime(RealVfs(vfs), out);
}
int GetLastError(sqlite3_vfs* vfs, int size, char* out) {
  return RealVfs(vfs)->xGetLastError(RealVfs(vfs), size, out);
}
int CurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  return RealVfs(vfs)->xCurrentTimeInt64(RealVfs(vfs), out);
}

const char* Register() {
  sqlite3_vfs* real = sqlite3_vfs_find(nullptr);
  // Without a default VFS of version 2 or more (always there on Linux), SQLite's own is used.
  if (real == nullptr || real->iVersion < 2) return nullptr;
  static sqlite3_vfs vfs = {};
  vfs.iVersion = 2;
  vfs.szOsFile = static_cast<int>(kHeaderSize) + real->szOsFile;
  vfs.mxPathname = real->mxPathname;
  vfs.zName = kVfsName;
  vfs.pAppData = real;
  vfs.xOpen = Open;
  vfs.xDelete = Delete;
  vfs.xAccess = Access;
  vfs.xFullPathname = FullPathname;
  vfs.xDlOpen = DlOpen;
  vfs.xDlError = DlError;
  vfs.xDlSym = DlSym;
  vfs.xDlClose = DlClose;
  vfs.xRandomness = Randomness;
  vfs.xSleep = Sleep;
  vfs.xCurrentTime = CurrentTime;
  vfs.xGetLastError = GetLastError;
  vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) return nullptr;
  return kVfsName;
}

}  // namespace

const char* WalBatchingVfsName() {
  static const char* const name = Register();
  return name;
}

uint64_t WalWritesIssued() { return wal_writes.load(std::memory_order_relaxed); }

}  // namespace talaria::store
