#include "talaria/plugins/elf_scan.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory_resource>
#include <optional>
#include <string>
#include <vector>

#include "talaria/base/unique_fd.h"
#include "talaria/plugin.h"

namespace talaria::plugins {
namespace {

// This host's ELF flavour. The structs below are the host's own, so a file that passes the
// class and byte-order checks can be read into them directly.
#if UINTPTR_MAX == 0xffffffffffffffffULL
using Ehdr = Elf64_Ehdr;
using Phdr = Elf64_Phdr;
using Shdr = Elf64_Shdr;
using Sym = Elf64_Sym;
using Dyn = Elf64_Dyn;
using Addr = Elf64_Addr;
constexpr unsigned char kHostClass = ELFCLASS64;
inline unsigned char SymType(unsigned char info) { return ELF64_ST_TYPE(info); }
inline unsigned char SymBind(unsigned char info) { return ELF64_ST_BIND(info); }
inline unsigned char SymVisibility(unsigned char other) { return ELF64_ST_VISIBILITY(other); }
#else
using Ehdr = Elf32_Ehdr;
using Phdr = Elf32_Phdr;
using Shdr = Elf32_Shdr;
using Sym = Elf32_Sym;
using Dyn = Elf32_Dyn;
using Addr = Elf32_Addr;
constexpr unsigned char kHostClass = ELFCLASS32;
inline unsigned char SymType(unsigned char info) { return ELF32_ST_TYPE(info); }
inline unsigned char SymBind(unsigned char info) { return ELF32_ST_BIND(info); }
inline unsigned char SymVisibility(unsigned char other) { return ELF32_ST_VISIBILITY(other); }
#endif

constexpr unsigned char kHostData =
    std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#elif defined(__i386__)
constexpr uint16_t kHostMachine = EM_386;
#elif defined(__arm__)
constexpr uint16_t kHostMachine = EM_ARM;
#elif defined(__riscv)
constexpr uint16_t kHostMachine = EM_RISCV;
#elif defined(__powerpc64__)
constexpr uint16_t kHostMachine = EM_PPC64;
#elif defined(__s390x__)
constexpr uint16_t kHostMachine = EM_S390;
#else
#error "talaria's plugin pre-scan does not know this machine's ELF e_machine"
#endif

// Caps on what one scan reads: far above any real plugin, low enough that a hostile header
// cannot make the scan allocate or read gigabytes.
constexpr uint64_t kMaxProgramHeaders = 4096;
constexpr uint64_t kMaxSections = 1u << 16;
constexpr uint64_t kMaxTableBytes = 64ull << 20;   // one symbol or string table
constexpr uint64_t kMaxHashChainSteps = 1u << 16;  // real chains hold a handful

constexpr std::string_view kEntrySymbol = TALARIA_PLUGIN_ENTRY_SYMBOL;
constexpr std::string_view kVersionSymbol = TALARIA_PLUGIN_VERSION_SYMBOL;
// The entry point's name with its terminating NUL, as the string table holds it.
constexpr std::string_view kEntryNeedle{TALARIA_PLUGIN_ENTRY_SYMBOL,
                                        sizeof TALARIA_PLUGIN_ENTRY_SYMBOL};

std::string MachineName(uint16_t machine) {
  switch (machine) {
    case EM_386:
      return "x86 (3)";
    case EM_X86_64:
      return "x86-64 (62)";
    case EM_ARM:
      return "ARM (40)";
    case EM_AARCH64:
      return "AArch64 (183)";
    case EM_RISCV:
      return "RISC-V (243)";
    case EM_PPC:
      return "PowerPC (20)";
    case EM_PPC64:
      return "PowerPC64 (21)";
    case EM_S390:
      return "S/390 (22)";
    case EM_MIPS:
      return "MIPS (8)";
    default:
      return "machine " + std::to_string(machine);
  }
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

ScanVerdict Reject(ScanOutcome outcome, std::string reason) {
  ScanVerdict v;
  v.outcome = outcome;
  v.reason = std::move(reason);
  return v;
}

// A bounds-checked view of the file: every read names its range, and a range that does not lie
// inside the file is refused before anything is read.
class Source {
 public:
  virtual ~Source() = default;
  uint64_t size() const { return size_; }

  // True when [offset, offset + length) lies inside the file (overflow-safe).
  bool Contains(uint64_t offset, uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }

  // Reads exactly `length` bytes at `offset`; false when out of bounds or on an I/O error.
  bool Read(uint64_t offset, void* out, uint64_t length) const {
    if (!Contains(offset, length)) return false;
    return ReadRaw(offset, out, length);
  }

  // Reads `count` records of `T` at `offset`; false when the range does not fit.
  template <typename T>
  bool ReadArray(uint64_t offset, uint64_t count, std::pmr::vector<T>& out) const {
    if (count > kMaxTableBytes / sizeof(T) || !Contains(offset, count * sizeof(T))) return false;
    out.resize(count);
    return Read(offset, out.data(), count * sizeof(T));
  }

  const std::string& io_error() const { return io_error_; }

 protected:
  explicit Source(uint64_t size) : size_(size) {}
  virtual bool ReadRaw(uint64_t offset, void* out, uint64_t length) const = 0;
  mutable std::string io_error_;

 private:
  uint64_t size_;
};

// Reads through a descriptor. The first 2 KiB are read with one pread up front: they hold the ELF
// header and program headers and, in a typical small plugin, .gnu.hash, .dynsym and .dynstr too
// (a whole page would mostly copy code nobody looks at: copying out of the page cache is most of
// a scan's time). Anything else (larger tables, the section headers at the end, the version's
// value in .data) is read where it lies, so a scan copies a few KiB however large the file is.
class FdSource final : public Source {
 public:
  static constexpr uint64_t kPrefixBytes = 2048;

  FdSource(int fd, uint64_t size) : Source(size), fd_(fd) {
    prefix_size_ = std::min(size, kPrefixBytes);
    if (!PreadAll(0, prefix_.data(), prefix_size_)) prefix_size_ = 0;
  }

 private:
  bool ReadRaw(uint64_t offset, void* out, uint64_t length) const override {
    if (offset + length <= prefix_size_) {  // no overflow: Contains() checked the range
      if (length > 0) std::memcpy(out, prefix_.data() + offset, length);
      return true;
    }
    return PreadAll(offset, out, length);
  }

  bool PreadAll(uint64_t offset, void* out, uint64_t length) const {
    auto* p = static_cast<unsigned char*>(out);
    while (length > 0) {
      const ssize_t n = ::pread(fd_, p, length, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        io_error_ = std::string("read failed: ") + std::strerror(errno);
        return false;
      }
      if (n == 0) {  // the file shrank under us
        io_error_ = "file shrank while being read";
        return false;
      }
      p += n;
      offset += static_cast<uint64_t>(n);
      length -= static_cast<uint64_t>(n);
    }
    return true;
  }

  int fd_;
  uint64_t prefix_size_ = 0;
  std::array<unsigned char, kPrefixBytes> prefix_;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::span<const unsigned char> image)
      : Source(image.size()), image_(image) {}

 private:
  bool ReadRaw(uint64_t offset, void* out, uint64_t length) const override {
    if (length > 0) std::memcpy(out, image_.data() + offset, length);
    return true;
  }
  std::span<const unsigned char> image_;
};

// The dynamic symbol table and its string table, wherever they were found.
struct SymbolTables {
  explicit SymbolTables(std::pmr::memory_resource* arena) : symbols(arena), strings(arena) {}
  std::pmr::vector<Sym> symbols;
  std::pmr::vector<char> strings;
};

class Scanner {
 public:
  explicit Scanner(const Source& src) : src_(src) {}

  ScanVerdict Run() {
    if (auto v = CheckHeader()) return *v;
    if (auto v = ReadProgramHeaders()) return *v;
    SymbolTables tables(&arena_);
    if (auto v = FindSymbolTables(tables)) return *v;
    return CheckSymbols(tables);
  }

 private:
  ScanVerdict Malformed(std::string what) const {
    if (!src_.io_error().empty()) return Reject(ScanOutcome::kIoError, src_.io_error());
    return Reject(ScanOutcome::kMalformed, std::move(what));
  }

  std::string PastEnd(std::string_view what, uint64_t offset, uint64_t length) const {
    return std::string(what) + " lies outside the file (offset " + std::to_string(offset) + " + " +
           std::to_string(length) + " bytes > file size " + std::to_string(src_.size()) + ")";
  }

  std::optional<ScanVerdict> CheckHeader() {
    unsigned char ident[EI_NIDENT] = {};
    const uint64_t have = std::min<uint64_t>(src_.size(), EI_NIDENT);
    if (!src_.Read(0, ident, have)) return Malformed("cannot read the ELF identification");
    if (have < SELFMAG || std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
      return Reject(ScanOutcome::kNotElf,
                    src_.size() == 0 ? "empty file" : "not an ELF file (no ELF magic)");
    }
    if (have < EI_NIDENT)
      return Malformed("truncated ELF header (" + std::to_string(have) + " bytes)");
    if (ident[EI_CLASS] != kHostClass) {
      const char* file_class = ident[EI_CLASS] == ELFCLASS32   ? "ELF32"
                               : ident[EI_CLASS] == ELFCLASS64 ? "ELF64"
                                                               : "an invalid ELF class";
      return Reject(ScanOutcome::kWrongClass, std::string(file_class) + " file; this host loads " +
                                                  (kHostClass == ELFCLASS64 ? "ELF64" : "ELF32"));
    }
    if (ident[EI_DATA] != kHostData) {
      const char* order = ident[EI_DATA] == ELFDATA2LSB   ? "little-endian"
                          : ident[EI_DATA] == ELFDATA2MSB ? "big-endian"
                                                          : "invalid byte order";
      return Reject(ScanOutcome::kWrongByteOrder,
                    std::string(order) + " file; this host is " +
                        (kHostData == ELFDATA2LSB ? "little-endian" : "big-endian"));
    }
    if (ident[EI_VERSION] != EV_CURRENT) return Malformed("unknown ELF identification version");
    if (!src_.Read(0, &eh_, sizeof eh_)) {
      return Malformed("truncated ELF header (" + std::to_string(src_.size()) + " of " +
                       std::to_string(sizeof eh_) + " bytes)");
    }
    if (eh_.e_machine != kHostMachine) {
      return Reject(ScanOutcome::kWrongMachine, "built for " + MachineName(eh_.e_machine) +
                                                    "; this host is " + MachineName(kHostMachine));
    }
    if (eh_.e_type != ET_DYN) {
      const char* kind = eh_.e_type == ET_EXEC   ? "an executable"
                         : eh_.e_type == ET_REL  ? "a relocatable object (.o)"
                         : eh_.e_type == ET_CORE ? "a core file"
                                                 : "of an unknown ELF type";
      return Reject(ScanOutcome::kNotSharedObject, std::string("not a shared object: ") + kind);
    }
    if (eh_.e_version != EV_CURRENT) return Malformed("unknown ELF version");
    if (eh_.e_ehsize < sizeof(Ehdr)) return Malformed("ELF header size too small");
    return std::nullopt;
  }

  std::optional<ScanVerdict> ReadProgramHeaders() {
    if (eh_.e_phnum == 0 || eh_.e_phoff == 0) return Malformed("no program headers");
    if (eh_.e_phnum == PN_XNUM)
      return Malformed("extended program header numbering is not supported");
    if (eh_.e_phentsize != sizeof(Phdr)) {
      return Malformed("program header entry size " + std::to_string(eh_.e_phentsize) +
                       " (expected " + std::to_string(sizeof(Phdr)) + ")");
    }
    if (eh_.e_phnum > kMaxProgramHeaders) return Malformed("too many program headers");
    const uint64_t bytes = uint64_t{eh_.e_phnum} * sizeof(Phdr);
    if (!src_.Contains(eh_.e_phoff, bytes)) {
      return Malformed(PastEnd("program header table", eh_.e_phoff, bytes));
    }
    if (!src_.ReadArray(eh_.e_phoff, eh_.e_phnum, phdrs_))
      return Malformed("cannot read program headers");
    bool has_load = false;
    for (size_t i = 0; i < phdrs_.size(); ++i) {
      const Phdr& ph = phdrs_[i];
      if (ph.p_type == PT_LOAD || ph.p_type == PT_DYNAMIC) {
        if (!src_.Contains(ph.p_offset, ph.p_filesz)) {
          return Malformed(PastEnd("segment " + std::to_string(i), ph.p_offset, ph.p_filesz));
        }
        if (ph.p_filesz > ph.p_memsz)
          return Malformed("segment " + std::to_string(i) + " is larger on disk than in memory");
        if (ph.p_vaddr > UINT64_MAX - ph.p_memsz)
          return Malformed("segment " + std::to_string(i) + " wraps the address space");
      }
      if (ph.p_type == PT_LOAD) has_load = true;
      if (ph.p_type == PT_DYNAMIC && dynamic_ == nullptr) dynamic_ = &phdrs_[i];
    }
    if (!has_load) return Malformed("no loadable segment");
    if (dynamic_ == nullptr) return Malformed("no dynamic segment (PT_DYNAMIC)");
    return std::nullopt;
  }

  // The file offset of [vaddr, vaddr + length) when it lies inside the file part of a loadable
  // segment; nullopt otherwise (unmapped, or in the zero-filled tail such as .bss).
  std::optional<uint64_t> VaddrToOffset(uint64_t vaddr, uint64_t length,
                                        bool require_exec = false) const {
    for (const Phdr& ph : phdrs_) {
      if (ph.p_type != PT_LOAD) continue;
      if (require_exec && (ph.p_flags & PF_X) == 0) continue;
      if (vaddr < ph.p_vaddr) continue;
      const uint64_t delta = vaddr - ph.p_vaddr;
      if (delta > ph.p_filesz || length > ph.p_filesz - delta) continue;
      return ph.p_offset + delta;  // cannot overflow: within [p_offset, p_offset + p_filesz]
    }
    return std::nullopt;
  }

  std::optional<ScanVerdict> FindSymbolTables(SymbolTables& out) {
    if (eh_.e_shoff != 0) {
      bool found = false;
      if (auto v = FromSectionHeaders(out, found)) return v;
      if (found) return std::nullopt;
    }
    return FromDynamicSegment(out);
  }

  // Finds SHT_DYNSYM and its linked string table through the section header table. `found` stays
  // false (without an error) when the table has no dynamic symbol section.
  std::optional<ScanVerdict> FromSectionHeaders(SymbolTables& out, bool& found) {
    if (eh_.e_shentsize != sizeof(Shdr)) {
      return Malformed("section header entry size " + std::to_string(eh_.e_shentsize) +
                       " (expected " + std::to_string(sizeof(Shdr)) + ")");
    }
    uint64_t count = eh_.e_shnum;
    if (count == 0) {  // extended numbering: the real count is in section 0's sh_size
      Shdr first;
      if (!src_.Read(eh_.e_shoff, &first, sizeof first)) {
        return Malformed(PastEnd("section header 0", eh_.e_shoff, sizeof first));
      }
      count = first.sh_size;
      if (count == 0) return std::nullopt;
    }
    if (count > kMaxSections) return Malformed("too many sections");
    const uint64_t bytes = count * sizeof(Shdr);
    if (!src_.Contains(eh_.e_shoff, bytes))
      return Malformed(PastEnd("section header table", eh_.e_shoff, bytes));
    // The table is read a few entries at a time up to the first SHT_DYNSYM, which linkers put
    // among the first sections: the whole table (2-3 KiB at the end of the file) would mostly be
    // copied for nothing. The range check above still covers all of it.
    constexpr uint64_t kChunk = 8;
    std::pmr::vector<Shdr> shdrs(&arena_);
    for (uint64_t first = 0; first < count; first += kChunk) {
      const uint64_t n = std::min(kChunk, count - first);
      if (!src_.ReadArray(eh_.e_shoff + first * sizeof(Shdr), n, shdrs))
        return Malformed("cannot read section headers");
      for (const Shdr& sh : shdrs) {
        if (sh.sh_type != SHT_DYNSYM) continue;
        if (sh.sh_entsize != sizeof(Sym))
          return Malformed(".dynsym entry size " + std::to_string(sh.sh_entsize));
        if (sh.sh_size % sizeof(Sym) != 0)
          return Malformed(".dynsym size is not a whole number of entries");
        if (!src_.Contains(sh.sh_offset, sh.sh_size))
          return Malformed(PastEnd(".dynsym", sh.sh_offset, sh.sh_size));
        if (sh.sh_link == 0 || sh.sh_link >= count)
          return Malformed(".dynsym links to no string table");
        Shdr str;
        if (sh.sh_link >= first && sh.sh_link < first + n) {
          str = shdrs[sh.sh_link - first];
        } else if (!src_.Read(eh_.e_shoff + sh.sh_link * sizeof(Shdr), &str, sizeof str)) {
          return Malformed("cannot read section headers");
        }
        if (str.sh_type != SHT_STRTAB) return Malformed(".dynsym's string table is not SHT_STRTAB");
        if (!src_.Contains(str.sh_offset, str.sh_size))
          return Malformed(PastEnd(".dynstr", str.sh_offset, str.sh_size));
        if (auto v =
                ReadTables(sh.sh_offset, sh.sh_size / sizeof(Sym), str.sh_offset, str.sh_size, out))
          return v;
        found = true;
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  // Finds the tables through PT_DYNAMIC (DT_SYMTAB, DT_STRTAB, DT_STRSZ) when the section
  // headers are missing (stripped with sstrip); the symbol count comes from DT_HASH or
  // DT_GNU_HASH.
  std::optional<ScanVerdict> FromDynamicSegment(SymbolTables& out) {
    std::pmr::vector<Dyn> dyn(&arena_);
    if (!src_.ReadArray(dynamic_->p_offset, dynamic_->p_filesz / sizeof(Dyn), dyn)) {
      return Malformed("cannot read the dynamic segment");
    }
    std::optional<uint64_t> symtab, strtab, strsz, syment, hash, gnu_hash;
    for (const Dyn& d : dyn) {
      if (d.d_tag == DT_NULL) break;
      const uint64_t v = d.d_un.d_val;
      switch (d.d_tag) {
        case DT_SYMTAB:
          symtab = v;
          break;
        case DT_STRTAB:
          strtab = v;
          break;
        case DT_STRSZ:
          strsz = v;
          break;
        case DT_SYMENT:
          syment = v;
          break;
        case DT_HASH:
          hash = v;
          break;
        case DT_GNU_HASH:
          gnu_hash = v;
          break;
        default:
          break;
      }
    }
    if (!symtab || !strtab || !strsz)
      return Malformed("no dynamic symbol table (no .dynsym, no DT_SYMTAB)");
    if (syment && *syment != sizeof(Sym)) return Malformed("DT_SYMENT " + std::to_string(*syment));
    auto str_off = VaddrToOffset(*strtab, *strsz);
    if (!str_off) return Malformed("DT_STRTAB " + Hex(*strtab) + " is not inside the file");
    uint64_t count = 0;
    if (hash) {
      uint32_t header[2];
      auto off = VaddrToOffset(*hash, sizeof header);
      if (!off || !src_.Read(*off, header, sizeof header))
        return Malformed("DT_HASH is not inside the file");
      count = header[1];  // nchain == number of symbols
    } else if (gnu_hash) {
      auto n = CountGnuHashSymbols(*gnu_hash);
      if (!n) return Malformed("DT_GNU_HASH table is damaged or not inside the file");
      count = *n;
    } else {
      return Malformed("no symbol hash table (DT_HASH or DT_GNU_HASH) to size the symbol table");
    }
    if (count > kMaxTableBytes / sizeof(Sym)) return Malformed("symbol table too large");
    auto sym_off = VaddrToOffset(*symtab, count * sizeof(Sym));
    if (!sym_off) return Malformed("DT_SYMTAB " + Hex(*symtab) + " is not inside the file");
    return ReadTables(*sym_off, count, *str_off, *strsz, out);
  }

  // The number of dynamic symbols implied by a GNU hash table: one past the highest symbol
  // index any chain reaches.
  std::optional<uint64_t> CountGnuHashSymbols(uint64_t vaddr) const {
    uint32_t header[4];  // nbuckets, symoffset, bloom_size, bloom_shift
    auto off = VaddrToOffset(vaddr, sizeof header);
    if (!off || !src_.Read(*off, header, sizeof header)) return std::nullopt;
    const uint64_t nbuckets = header[0], symoffset = header[1], bloom_size = header[2];
    const uint64_t buckets_at = vaddr + sizeof header + bloom_size * sizeof(Addr);
    if (nbuckets == 0 || nbuckets > kMaxTableBytes / 4 ||
        bloom_size > kMaxTableBytes / sizeof(Addr)) {
      return std::nullopt;
    }
    auto b_off = VaddrToOffset(buckets_at, nbuckets * 4);
    std::pmr::vector<uint32_t> buckets(&arena_);
    if (!b_off || !src_.ReadArray(*b_off, nbuckets, buckets)) return std::nullopt;
    const uint64_t last = *std::max_element(buckets.begin(), buckets.end());
    if (last == 0) return symoffset;
    if (last < symoffset) return std::nullopt;
    const uint64_t chains_at = buckets_at + nbuckets * 4;
    for (uint64_t i = last, steps = 0; steps < kMaxHashChainSteps; ++i, ++steps) {
      uint32_t chain = 0;
      auto c_off = VaddrToOffset(chains_at + (i - symoffset) * 4, 4);
      if (!c_off || !src_.Read(*c_off, &chain, 4)) return std::nullopt;
      if (chain & 1u) return i + 1;
    }
    return std::nullopt;
  }

  std::optional<ScanVerdict> ReadTables(uint64_t sym_off, uint64_t sym_count, uint64_t str_off,
                                        uint64_t str_size, SymbolTables& out) {
    if (str_size > kMaxTableBytes) return Malformed("string table too large");
    if (!src_.ReadArray(str_off, str_size, out.strings))
      return Malformed("cannot read the dynamic string table");
    // Cheap prefilter: a name the string table does not contain cannot be exported (names may
    // share tails with longer ones, so only the trailing NUL is part of the pattern).
    if (std::string_view(out.strings.data(), out.strings.size()).find(kEntryNeedle) ==
        std::string_view::npos) {
      return Reject(ScanOutcome::kNoEntryPoint, "does not export " TALARIA_PLUGIN_ENTRY_SYMBOL);
    }
    if (!src_.ReadArray(sym_off, sym_count, out.symbols))
      return Malformed("cannot read the dynamic symbol table");
    return std::nullopt;
  }

  // The symbol's name when it is a NUL-terminated string inside the table; empty otherwise.
  static std::string_view NameOf(const Sym& sym, const SymbolTables& t) {
    if (sym.st_name == 0 || sym.st_name >= t.strings.size()) return {};
    const char* begin = t.strings.data() + sym.st_name;
    const void* nul = std::memchr(begin, '\0', t.strings.size() - sym.st_name);
    if (nul == nullptr) return {};
    return {begin, static_cast<size_t>(static_cast<const char*>(nul) - begin)};
  }

  static bool IsDefinedExport(const Sym& sym) {
    const unsigned char bind = SymBind(sym.st_info);
    const unsigned char vis = SymVisibility(sym.st_other);
    return sym.st_shndx != SHN_UNDEF && sym.st_shndx < SHN_LORESERVE &&
           (bind == STB_GLOBAL || bind == STB_WEAK) && (vis == STV_DEFAULT || vis == STV_PROTECTED);
  }

  ScanVerdict CheckSymbols(const SymbolTables& t) {
    const Sym* entry = nullptr;
    const Sym* version = nullptr;
    bool entry_undefined = false;
    for (const Sym& sym : t.symbols) {
      const std::string_view name = NameOf(sym, t);
      if (name == kEntrySymbol) {
        if (IsDefinedExport(sym))
          entry = &sym;
        else
          entry_undefined = true;
      } else if (name == kVersionSymbol && IsDefinedExport(sym)) {
        version = &sym;
      }
    }
    if (entry == nullptr) {
      return Reject(ScanOutcome::kNoEntryPoint,
                    entry_undefined ? "references " TALARIA_PLUGIN_ENTRY_SYMBOL
                                      " but does not define and export it"
                                    : "does not export " TALARIA_PLUGIN_ENTRY_SYMBOL);
    }
    if (SymType(entry->st_info) != STT_FUNC) {
      return Reject(ScanOutcome::kNoEntryPoint, TALARIA_PLUGIN_ENTRY_SYMBOL " is not a function");
    }
    if (!VaddrToOffset(entry->st_value, 1, /*require_exec=*/true)) {
      return Malformed(TALARIA_PLUGIN_ENTRY_SYMBOL " does not point into an executable segment");
    }
    if (version == nullptr) {
      return Reject(ScanOutcome::kNoVersion, "does not export " TALARIA_PLUGIN_VERSION_SYMBOL
                                             " (TALARIA_PLUGIN_DEFINE_VERSION)");
    }
    if (SymType(version->st_info) != STT_OBJECT || version->st_size != sizeof(uint32_t)) {
      return Reject(ScanOutcome::kNoVersion,
                    TALARIA_PLUGIN_VERSION_SYMBOL " is not a 4-byte data object");
    }
    auto off = VaddrToOffset(version->st_value, sizeof(uint32_t));
    uint32_t value = 0;
    if (!off)
      return Reject(ScanOutcome::kNoVersion,
                    TALARIA_PLUGIN_VERSION_SYMBOL " has no initialized value in the file");
    if (!src_.Read(*off, &value, sizeof value))
      return Malformed("cannot read " TALARIA_PLUGIN_VERSION_SYMBOL);
    if (value != TALARIA_PLUGIN_INTERFACE_VERSION) {
      ScanVerdict v =
          Reject(ScanOutcome::kIncompatibleVersion,
                 "interface version " + std::to_string(value) + "; this host supports " +
                     std::to_string(TALARIA_PLUGIN_INTERFACE_VERSION));
      v.interface_version = value;
      return v;
    }
    ScanVerdict v;
    v.outcome = ScanOutcome::kAccepted;
    v.interface_version = value;
    return v;
  }

  const Source& src_;
  // The tables of a typical plugin fit in this buffer, so a scan does not go to the heap for
  // them; larger tables spill over to it. Declared before the containers that use it; mutable:
  // scratch memory, also for the const lookups.
  static constexpr size_t kArenaBytes = 8192;
  alignas(std::max_align_t) std::byte arena_buffer_[kArenaBytes];
  mutable std::pmr::monotonic_buffer_resource arena_{arena_buffer_, kArenaBytes};
  Ehdr eh_{};
  std::pmr::vector<Phdr> phdrs_{&arena_};
  const Phdr* dynamic_ = nullptr;
};

constexpr std::string_view kOutcomeNames[] = {
    "accepted",      "not_elf",
    "wrong_class",   "wrong_byte_order",
    "wrong_machine", "not_shared_object",
    "malformed",     "no_entry_point",
    "no_version",    "incompatible_version",
    "io_error",      "command_refused",
};

}  // namespace

std::string_view ScanOutcomeName(ScanOutcome outcome) {
  const auto i = static_cast<size_t>(outcome);
  return i < std::size(kOutcomeNames) ? kOutcomeNames[i] : "unknown";
}

bool ParseScanOutcome(std::string_view name, ScanOutcome& out) {
  for (size_t i = 0; i < std::size(kOutcomeNames); ++i) {
    if (kOutcomeNames[i] == name) {
      out = static_cast<ScanOutcome>(i);
      return true;
    }
  }
  return false;
}

ScanVerdict ScanPluginFd(int fd, uint64_t size) {
  FdSource src(fd, size);
  return Scanner(src).Run();
}

ScanVerdict ScanPluginImage(std::span<const unsigned char> image) {
  MemorySource src(image);
  return Scanner(src).Run();
}

ScanVerdict ScanPluginFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd)
    return Reject(ScanOutcome::kIoError, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Reject(ScanOutcome::kIoError, std::string("cannot stat: ") + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return Reject(ScanOutcome::kIoError, "not a regular file");
  return ScanPluginFd(fd.get(), static_cast<uint64_t>(st.st_size));
}

}  // namespace talaria::plugins
