// Replacement global allocation functions; see alloc_counter.h.
// Raw malloc/free are the point of this file (it implements operator new itself).
#include "alloc_counter.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace talaria_bench {
namespace {

constexpr size_t kPrefix = 16;  // keeps malloc's 16-byte alignment

std::atomic<int64_t> g_live{0};
std::atomic<uint64_t> g_calls{0};

bool ReadMode() {
  const char* v = std::getenv("TALARIA_BENCH_COUNT_ALLOC");  // allocates nothing
  return v != nullptr && v[0] == '1' && v[1] == '\0';
}

// 0 until the first allocation decides, then 1 (plain) or 2 (counting); never changed after,
// so every block is freed in the mode it was allocated in. A constant-initialized atomic
// rather than a function-local static: the timing workloads pay one load per call, not a
// guard check and a call.
std::atomic<int> g_mode{0};

[[gnu::noinline]] int DecideMode() {
  const int mode = ReadMode() ? 2 : 1;
  int expected = 0;
  g_mode.compare_exchange_strong(expected, mode, std::memory_order_relaxed);
  return g_mode.load(std::memory_order_relaxed);
}

[[gnu::always_inline]] inline bool Counting() {
  int mode = g_mode.load(std::memory_order_relaxed);
  if (mode == 0) [[unlikely]]
    mode = DecideMode();
  return mode == 2;
}

size_t PrefixFor(size_t align) { return align > kPrefix ? align : kPrefix; }

void* Allocate(size_t size, size_t align) noexcept {
  if (size == 0) size = 1;
  const bool over_aligned = align > alignof(std::max_align_t);
  if (!Counting()) {
    if (!over_aligned) return std::malloc(size);
    void* p = nullptr;
    return posix_memalign(&p, align, size) == 0 ? p : nullptr;
  }
  const size_t prefix = PrefixFor(align);
  void* base = nullptr;
  if (over_aligned) {
    if (posix_memalign(&base, align, size + prefix) != 0) base = nullptr;
  } else {
    base = std::malloc(size + prefix);
  }
  if (base == nullptr) return nullptr;
  char* p = static_cast<char*>(base) + prefix;
  reinterpret_cast<size_t*>(p)[-1] = size;
  g_live.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void Release(void* p, size_t align) noexcept {
  if (p == nullptr) return;
  if (!Counting()) {
    std::free(p);
    return;
  }
  const size_t size = reinterpret_cast<size_t*>(p)[-1];
  g_live.fetch_sub(static_cast<int64_t>(size), std::memory_order_relaxed);
  std::free(static_cast<char*>(p) - PrefixFor(align));
}

void* AllocateOrThrow(size_t size, size_t align) {
  for (;;) {
    if (void* p = Allocate(size, align)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

bool AllocCountingActive() { return Counting(); }
int64_t LiveHeapBytes() { return g_live.load(std::memory_order_relaxed); }
uint64_t AllocCalls() { return g_calls.load(std::memory_order_relaxed); }

}  // namespace talaria_bench

using talaria_bench::Allocate;
using talaria_bench::AllocateOrThrow;
using talaria_bench::Release;

constexpr size_t kDefaultAlign = alignof(std::max_align_t);

// The plain path of the calls the workloads make inline: malloc and free with one load before.
void* operator new(size_t n) {
  if (!talaria_bench::Counting()) [[likely]] {
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  }
  return AllocateOrThrow(n, kDefaultAlign);
}
void* operator new[](size_t n) { return AllocateOrThrow(n, kDefaultAlign); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return Allocate(n, kDefaultAlign); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  return Allocate(n, kDefaultAlign);
}
void* operator new(size_t n, std::align_val_t a) {
  return AllocateOrThrow(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a) {
  return AllocateOrThrow(n, static_cast<size_t>(a));
}
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return Allocate(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return Allocate(n, static_cast<size_t>(a));
}

void operator delete(void* p) noexcept {
  if (!talaria_bench::Counting()) [[likely]] {
    std::free(p);
    return;
  }
  Release(p, kDefaultAlign);
}
void operator delete[](void* p) noexcept { Release(p, kDefaultAlign); }
void operator delete(void* p, size_t) noexcept {
  if (!talaria_bench::Counting()) [[likely]] {
    std::free(p);
    return;
  }
  Release(p, kDefaultAlign);
}
void operator delete[](void* p, size_t) noexcept { Release(p, kDefaultAlign); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Release(p, kDefaultAlign); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Release(p, kDefaultAlign); }
void operator delete(void* p, std::align_val_t a) noexcept { Release(p, static_cast<size_t>(a)); }
void operator delete[](void* p, std::align_val_t a) noexcept { Release(p, static_cast<size_t>(a)); }
void operator delete(void* p, size_t, std::align_val_t a) noexcept {
  Release(p, static_cast<size_t>(a));
}
void operator delete[](void* p, size_t, std::align_val_t a) noexcept {
  Release(p, static_cast<size_t>(a));
}
void operator delete(void* p, std::align_val_t a, const std::nothrow_t&) noexcept {
  Release(p, static_cast<size_t>(a));
}
void operator delete[](void* p, std::align_val_t a, const std::nothrow_t&) noexcept {
  Release(p, static_cast<size_t>(a));
}
