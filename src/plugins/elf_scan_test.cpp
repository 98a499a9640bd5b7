#include "talaria/plugins/elf_scan.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "plugins/plugin_test_util.h"
#include "talaria/plugin.h"

namespace talaria::plugins {
namespace {

using testing::Elf32Header;
using testing::Poke;
using testing::ReadBytes;
using testing::Rng;
using testing::TempDir;
using testing::TestPlugin;

ScanVerdict ScanBytes(const std::vector<unsigned char>& bytes) { return ScanPluginImage(bytes); }

template <typename T>
T ReadField(const std::vector<unsigned char>& bytes, size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

TEST(ElfScan, AcceptsTheExamplePlugin) {
  const ScanVerdict v = ScanPluginFile(TestPlugin("example_plugin"));
  EXPECT_EQ(v.outcome, ScanOutcome::kAccepted) << v.reason;
  EXPECT_EQ(v.interface_version, TALARIA_PLUGIN_INTERFACE_VERSION);
  EXPECT_TRUE(v.reason.empty());
}

TEST(ElfScan, FileAndImageAgree) {
  for (const char* name : {"example_plugin", "wrong_version_plugin", "not_a_plugin"}) {
    const ScanVerdict a = ScanPluginFile(TestPlugin(name));
    const ScanVerdict b = ScanBytes(ReadBytes(TestPlugin(name)));
    EXPECT_EQ(a.outcome, b.outcome) << name;
    EXPECT_EQ(a.reason, b.reason) << name;
  }
}

TEST(ElfScan, RejectsWrongInterfaceVersionAndReadsItsValue) {
  const ScanVerdict v = ScanPluginFile(TestPlugin("wrong_version_plugin"));
  EXPECT_EQ(v.outcome, ScanOutcome::kIncompatibleVersion);
  EXPECT_EQ(v.interface_version, 999u);
  EXPECT_NE(v.reason.find("interface version 999"), std::string::npos) << v.reason;
}

TEST(ElfScan, RejectsPluginWithoutVersionSymbol) {
  const ScanVerdict v = ScanPluginFile(TestPlugin("no_version_plugin"));
  EXPECT_EQ(v.outcome, ScanOutcome::kNoVersion) << v.reason;
}

TEST(ElfScan, RejectsSharedObjectWithoutEntryPoint) {
  const ScanVerdict v = ScanPluginFile(TestPlugin("not_a_plugin"));
  EXPECT_EQ(v.outcome, ScanOutcome::kNoEntryPoint) << v.reason;
  EXPECT_NE(v.reason.find("talaria_register_tools"), std::string::npos);
}

TEST(ElfScan, RejectsTextAndEmptyFiles) {
  TempDir dir;
  testing::WriteText(dir / "notes.so", "this is not a shared object\n");
  testing::WriteText(dir / "empty.so", "");
  testing::WriteText(dir / "magic_only.so",
                     "\x7f"
                     "ELF");
  EXPECT_EQ(ScanPluginFile(dir / "notes.so").outcome, ScanOutcome::kNotElf);
  EXPECT_EQ(ScanPluginFile(dir / "empty.so").outcome, ScanOutcome::kNotElf);
  EXPECT_EQ(ScanPluginFile(dir / "magic_only.so").outcome, ScanOutcome::kMalformed);
}

TEST(ElfScan, RejectsTruncatedElfAtEveryInterestingLength) {
  const auto full = ReadBytes(TestPlugin("example_plugin"));
  ASSERT_GT(full.size(), 4096u);
  for (size_t len : {size_t{5}, size_t{16}, size_t{40}, size_t{63}, size_t{64}, size_t{120},
                     size_t{1000}, full.size() / 2, full.size() - 64, full.size() - 1}) {
    std::vector<unsigned char> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    const ScanVerdict v = ScanBytes(cut);
    EXPECT_EQ(v.outcome, ScanOutcome::kMalformed) << len << ": " << v.reason;
    EXPECT_FALSE(v.reason.empty());
  }
}

// A file scan reads the first 2 KiB up front and everything else where it lies; an image scan
// sees all bytes at once. Both must reach the same verdict for the same bytes, whichever side
// of the prefix's (or a page's) end a table or the file's end falls on.
TEST(ElfScan, FileScanMatchesImageScanAroundTheFirstPage) {
  const auto full = ReadBytes(TestPlugin("example_plugin"));
  ASSERT_GT(full.size(), 8192u);
  TempDir dir;
  const std::string path = dir / "cut.so";
  for (size_t len : {size_t{0}, size_t{63}, size_t{64}, size_t{1000}, size_t{2047}, size_t{2048},
                     size_t{2049}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{8191},
                     size_t{8192}, full.size() - 1, full.size()}) {
    const std::vector<unsigned char> cut(full.begin(),
                                         full.begin() + static_cast<std::ptrdiff_t>(len));
    testing::WriteBytes(path, cut);
    const ScanVerdict from_file = ScanPluginFile(path);
    const ScanVerdict from_image = ScanBytes(cut);
    EXPECT_EQ(from_file.outcome, from_image.outcome) << len << ": " << from_file.reason;
    EXPECT_EQ(from_file.reason, from_image.reason) << len;
  }
}

// Damaged plugins scanned from a file (first 2 KiB up front, the rest read where it lies) and
// from memory: the same verdict and reason every time, and never a crash (ASan run).
TEST(ElfScan, FileAndImageAgreeOnMutatedPlugins) {
  const auto good = ReadBytes(TestPlugin("example_plugin"));
  Rng rng(0x5EED0009);
  TempDir dir;
  const std::string path = dir / "mutant.so";
  for (int i = 0; i < 300; ++i) {
    auto bytes = good;
    for (int e = 0, edits = 1 + static_cast<int>(rng.Below(6)); e < edits; ++e) {
      const size_t at = rng.Below(bytes.size() - 8);
      Poke<uint64_t>(bytes, at, rng.Below(2) == 0 ? rng.Next() : rng.Below(bytes.size() + 64));
    }
    if (rng.Below(4) == 0) bytes.resize(rng.Below(bytes.size()));
    testing::WriteBytes(path, bytes);
    const ScanVerdict from_file = ScanPluginFile(path);
    const ScanVerdict from_image = ScanBytes(bytes);
    ASSERT_EQ(from_file.outcome, from_image.outcome) << "iteration " << i;
    ASSERT_EQ(from_file.reason, from_image.reason) << "iteration " << i;
  }
}

// Section headers moved past the first page of a much larger file: read where they lie.
TEST(ElfScan, FindsSectionHeadersFarBeyondTheFirstPage) {
  auto bytes = ReadBytes(TestPlugin("example_plugin"));
  const auto shoff = ReadField<uint64_t>(bytes, offsetof(Elf64_Ehdr, e_shoff));
  const auto shnum = ReadField<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shnum));
  ASSERT_GT(shnum, 0u);
  const size_t table = size_t{shnum} * sizeof(Elf64_Shdr);
  ASSERT_LE(shoff + table, bytes.size());
  const std::vector<unsigned char> headers(
      bytes.begin() + static_cast<std::ptrdiff_t>(shoff),
      bytes.begin() + static_cast<std::ptrdiff_t>(shoff + table));
  const size_t moved_to = bytes.size() + (1u << 20);  // 1 MiB of padding in between
  bytes.resize(moved_to, 0);
  bytes.insert(bytes.end(), headers.begin(), headers.end());
  Poke<uint64_t>(bytes, offsetof(Elf64_Ehdr, e_shoff), moved_to);
  TempDir dir;
  testing::WriteBytes(dir / "far.so", bytes);
  const ScanVerdict v = ScanPluginFile(dir / "far.so");
  EXPECT_EQ(v.outcome, ScanOutcome::kAccepted) << v.reason;
  EXPECT_EQ(v.interface_version, TALARIA_PLUGIN_INTERFACE_VERSION);
}

// The section headers are read a few at a time up to the first SHT_DYNSYM. Moved to a later
// chunk (its string table left in the first), .dynsym is still found and its link followed; a
// link to a section that is no string table is still refused. From a file and from memory alike.
TEST(ElfScan, FindsDynsymAndItsStringTableInDifferentSectionHeaderChunks) {
  auto bytes = ReadBytes(TestPlugin("example_plugin"));
  const auto shoff = ReadField<Elf64_Off>(bytes, offsetof(Elf64_Ehdr, e_shoff));
  const auto shnum = ReadField<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shnum));
  ASSERT_GT(shnum, 12);
  auto at = [&](size_t i) { return static_cast<size_t>(shoff + i * sizeof(Elf64_Shdr)); };
  size_t dynsym = 0;
  for (size_t i = 1; i < shnum; ++i) {
    if (ReadField<uint32_t>(bytes, at(i) + offsetof(Elf64_Shdr, sh_type)) == SHT_DYNSYM) dynsym = i;
  }
  ASSERT_GT(dynsym, 0u);
  ASSERT_LT(dynsym, 8u);  // in the first chunk, as linkers place it
  // Swap it with section 11 (the second chunk); nothing else in the scan looks at section order.
  std::vector<unsigned char> moved = bytes;
  std::memcpy(moved.data() + at(11), bytes.data() + at(dynsym), sizeof(Elf64_Shdr));
  std::memcpy(moved.data() + at(dynsym), bytes.data() + at(11), sizeof(Elf64_Shdr));
  ASSERT_NE(ReadField<uint32_t>(moved, at(dynsym) + offsetof(Elf64_Shdr, sh_type)), SHT_DYNSYM);

  TempDir dir;
  const std::string path = dir / "moved.so";
  testing::WriteBytes(path, moved);
  for (const ScanVerdict& v : {ScanBytes(moved), ScanPluginFile(path)}) {
    EXPECT_EQ(v.outcome, ScanOutcome::kAccepted) << v.reason;
  }
  // Link the moved .dynsym to section 12 (also the second chunk), then to section 1 (the
  // first): neither is a string table.
  for (uint32_t link : {12u, 1u}) {
    ASSERT_NE(ReadField<uint32_t>(moved, at(link) + offsetof(Elf64_Shdr, sh_type)), SHT_STRTAB);
    std::vector<unsigned char> bad = moved;
    Poke<uint32_t>(bad, at(11) + offsetof(Elf64_Shdr, sh_link), link);
    testing::WriteBytes(path, bad);
    for (const ScanVerdict& v : {ScanBytes(bad), ScanPluginFile(path)}) {
      EXPECT_EQ(v.outcome, ScanOutcome::kMalformed) << link;
      EXPECT_NE(v.reason.find("not SHT_STRTAB"), std::string::npos) << v.reason;
    }
  }
}

TEST(ElfScan, RejectsCrafted32BitElf) {
  const ScanVerdict v = ScanBytes(Elf32Header());
  EXPECT_EQ(v.outcome, ScanOutcome::kWrongClass);
  EXPECT_NE(v.reason.find("ELF32"), std::string::npos) << v.reason;
}

TEST(ElfScan, RejectsForeignArchitecture) {
  auto bytes = ReadBytes(TestPlugin("example_plugin"));
#if defined(__aarch64__)
  constexpr uint16_t kForeign = EM_X86_64;
#else
  constexpr uint16_t kForeign = EM_AARCH64;
#endif
  Poke<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_machine), kForeign);
  const ScanVerdict v = ScanBytes(bytes);
  EXPECT_EQ(v.outcome, ScanOutcome::kWrongMachine);
  EXPECT_NE(v.reason.find("this host is"), std::string::npos) << v.reason;
}

TEST(ElfScan, RejectsOtherByteOrderAndObjectKinds) {
  auto be = ReadBytes(TestPlugin("example_plugin"));
  be[EI_DATA] = be[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
  EXPECT_EQ(ScanBytes(be).outcome, ScanOutcome::kWrongByteOrder);

  auto exec = ReadBytes(TestPlugin("example_plugin"));
  Poke<uint16_t>(exec, offsetof(Elf64_Ehdr, e_type), ET_EXEC);
  EXPECT_EQ(ScanBytes(exec).outcome, ScanOutcome::kNotSharedObject);

  auto bad_class = ReadBytes(TestPlugin("example_plugin"));
  bad_class[EI_CLASS] = 7;
  EXPECT_EQ(ScanBytes(bad_class).outcome, ScanOutcome::kWrongClass);
}

TEST(ElfScan, FindsSymbolsThroughDynamicSegmentWithoutSectionHeaders) {
  for (const char* name : {"example_plugin", "wrong_version_plugin"}) {
    auto bytes = ReadBytes(TestPlugin(name));
    Poke<uint64_t>(bytes, offsetof(Elf64_Ehdr, e_shoff), 0);
    Poke<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shnum), 0);
    Poke<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shstrndx), 0);
    EXPECT_EQ(ScanBytes(bytes).outcome, ScanBytes(ReadBytes(TestPlugin(name))).outcome) << name;
  }
}

TEST(ElfScan, RejectsHostileTableOffsetsWithReasons) {
  const auto good = ReadBytes(TestPlugin("example_plugin"));
  struct Case {
    size_t offset;
    uint64_t value;
    int width;
  };
  const Case cases[] = {
      {offsetof(Elf64_Ehdr, e_phoff), ~uint64_t{0} - 8, 8},
      {offsetof(Elf64_Ehdr, e_phoff), good.size() - 8, 8},
      {offsetof(Elf64_Ehdr, e_shoff), ~uint64_t{0} - 63, 8},
      {offsetof(Elf64_Ehdr, e_shoff), good.size(), 8},
      {offsetof(Elf64_Ehdr, e_phnum), 0xffff, 2},
      {offsetof(Elf64_Ehdr, e_phnum), 0, 2},
      {offsetof(Elf64_Ehdr, e_shnum), 0xfffe, 2},
      {offsetof(Elf64_Ehdr, e_phentsize), 1, 2},
      {offsetof(Elf64_Ehdr, e_shentsize), 0, 2},
  };
  for (const Case& c : cases) {
    auto bytes = good;
    if (c.width == 8)
      Poke<uint64_t>(bytes, c.offset, c.value);
    else
      Poke<uint16_t>(bytes, c.offset, static_cast<uint16_t>(c.value));
    const ScanVerdict v = ScanBytes(bytes);
    EXPECT_EQ(v.outcome, ScanOutcome::kMalformed) << c.offset << "=" << c.value << ": " << v.reason;
    EXPECT_FALSE(v.reason.empty());
  }
}

TEST(ElfScan, FifoNamedSoIsRejectedWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "pipe.so").c_str(), 0600), 0);
  EXPECT_EQ(ScanPluginFile(dir / "pipe.so").outcome, ScanOutcome::kIoError);
  EXPECT_EQ(ScanPluginFile(dir / "missing.so").outcome, ScanOutcome::kIoError);
}

// Random bytes after a valid ELF header (one whose program and section header offsets point into
// the random part): the scan must never crash, read out of bounds (ASan run) or accept.
TEST(ElfScan, SurvivesRandomBytesAfterValidHeader) {
  const auto good = ReadBytes(TestPlugin("example_plugin"));
  Rng rng(0x5EED0007);
  for (int i = 0; i < 4000; ++i) {
    const size_t len = sizeof(Elf64_Ehdr) + rng.Below(i % 4 == 0 ? 16384 : 1024);
    std::vector<unsigned char> bytes(len);
    std::copy(good.begin(), good.begin() + sizeof(Elf64_Ehdr), bytes.begin());
    for (size_t k = sizeof(Elf64_Ehdr); k < len; ++k)
      bytes[k] = static_cast<unsigned char>(rng.Next());
    Poke<uint64_t>(bytes, offsetof(Elf64_Ehdr, e_phoff), sizeof(Elf64_Ehdr));
    Poke<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_phnum), static_cast<uint16_t>(1 + rng.Below(12)));
    Poke<uint64_t>(bytes, offsetof(Elf64_Ehdr, e_shoff),
                   i % 3 == 0 ? 0 : sizeof(Elf64_Ehdr) + rng.Below(len));
    Poke<uint16_t>(bytes, offsetof(Elf64_Ehdr, e_shnum), static_cast<uint16_t>(rng.Below(40)));
    const ScanVerdict v = ScanBytes(bytes);
    ASSERT_NE(v.outcome, ScanOutcome::kAccepted) << "iteration " << i;
    ASSERT_FALSE(v.reason.empty()) << "iteration " << i;
  }
}

// Mutations of a real plugin: a few random bytes or words overwritten anywhere, often with edge
// values. Accepting is allowed (a harmless byte may change); crashing is not.
TEST(ElfScan, SurvivesMutatedRealPlugins) {
  const auto good = ReadBytes(TestPlugin("example_plugin"));
  Rng rng(0x5EED0008);
  const uint64_t edges[] = {0,
                            1,
                            0x7f,
                            0xff,
                            0xffff,
                            0xffffffff,
                            ~uint64_t{0},
                            good.size(),
                            good.size() - 1,
                            uint64_t{1} << 63};
  int accepted = 0;
  for (int i = 0; i < 4000; ++i) {
    auto bytes = good;
    const int edits = 1 + static_cast<int>(rng.Below(8));
    for (int e = 0; e < edits; ++e) {
      // Half the edits hit the headers and tables at the front, where the scan looks first.
      const size_t limit = rng.Below(2) == 0 ? std::min<size_t>(bytes.size(), 1024) : bytes.size();
      const size_t at = rng.Below(limit - 8);
      if (rng.Below(2) == 0)
        bytes[at] = static_cast<unsigned char>(rng.Next());
      else
        Poke<uint64_t>(bytes, at, edges[rng.Below(std::size(edges))]);
    }
    if (rng.Below(4) == 0) bytes.resize(rng.Below(bytes.size()));
    const ScanVerdict v = ScanBytes(bytes);
    if (v.accepted())
      ++accepted;
    else
      ASSERT_FALSE(v.reason.empty()) << "iteration " << i;
  }
  EXPECT_LT(accepted, 4000);
}

TEST(ElfScan, OutcomeNamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(ScanOutcome::kCommandRefused); ++i) {
    const auto o = static_cast<ScanOutcome>(i);
    ScanOutcome back{};
    ASSERT_TRUE(ParseScanOutcome(ScanOutcomeName(o), back)) << i;
    EXPECT_EQ(back, o);
  }
  ScanOutcome ignored{};
  EXPECT_FALSE(ParseScanOutcome("bogus", ignored));
}

}  // namespace
}  // namespace talaria::plugins
