// Shared by the plugin tests: temp directories, file bytes, the test plugins built by
// tests/plugins (TALARIA_TEST_PLUGIN_DIR), and crafted ELF headers.
#pragma once

#include <elf.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace talaria::plugins::testing {

namespace fs = std::filesystem;

using test_support::TempDir;

inline std::string TestPlugin(std::string_view name) {
  std::string path = TALARIA_TEST_PLUGIN_DIR "/";
  path += name;
  path += ".so";
  return path;
}

inline std::vector<unsigned char> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void WriteBytes(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

inline void WriteText(const std::string& path, std::string_view text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A copy of a test plugin under a new name (a fresh inode, so dlopen maps it anew).
inline void CopyPlugin(std::string_view plugin, const std::string& to) {
  fs::copy_file(TestPlugin(plugin), to, fs::copy_options::overwrite_existing);
}

template <typename T>
void Poke(std::vector<unsigned char>& bytes, size_t offset, T value) {
  ASSERT_LE(offset + sizeof value, bytes.size());
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

// A 32-bit little-endian i386 shared-object header followed by padding: a crafted ELF32 file.
inline std::vector<unsigned char> Elf32Header() {
  Elf32_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS32;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
  eh.e_machine = EM_386;
  eh.e_version = EV_CURRENT;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf32_Phdr);
  std::vector<unsigned char> bytes(512, 0);
  std::memcpy(bytes.data(), &eh, sizeof eh);
  return bytes;
}

// splitmix64: deterministic bytes for the fuzz-ish tests.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

}  // namespace talaria::plugins::testing
