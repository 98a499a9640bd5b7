// The plugin pre-scan: decides from a file's bytes alone whether it is a talaria plugin this
// process can load — an ELF shared object of this machine's class, byte order and architecture
// that exports `talaria_register_tools` (a defined global function) and a
// `talaria_plugin_interface_version` data object whose value, read from the file, is one this
// host supports.
//
// Nothing is mapped, executed or dlopen'ed: the file is read with pread(2) only, every offset and
// size taken from the file is checked against the file's size (with overflow-safe arithmetic)
// before it is used, and every table read is capped, so a truncated, hostile or random file is
// rejected with a reason and can never make the scan crash or read out of bounds.
// Thread-safety: free functions without shared state; safe to call concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace talaria::plugins {

// What the pre-scan concluded, most specific first. Anything but kAccepted means "do not load".
// Script-tool manifests (script_tool.h) use kAccepted, kMalformed, kIoError and kCommandRefused.
enum class ScanOutcome : unsigned char {
  kAccepted,             // a loadable plugin of a supported interface version
  kNotElf,               // no ELF magic (text, junk, an empty file)
  kWrongClass,           // ELF32 on a 64-bit host (or the reverse)
  kWrongByteOrder,       // big-endian file on a little-endian host (or the reverse)
  kWrongMachine,         // another architecture (e_machine)
  kNotSharedObject,      // an executable, relocatable object or core file
  kMalformed,            // truncated, inconsistent or out-of-bounds headers or tables
  kNoEntryPoint,         // talaria_register_tools is not exported as a defined function
  kNoVersion,            // talaria_plugin_interface_version is missing or not a 4-byte object
  kIncompatibleVersion,  // the version's value is not one this host supports
  kIoError,              // could not open, stat or read the file; not a regular file
  kCommandRefused,       // script tools: the command guard would block the manifest's command
};

// Stable lower_snake names ("accepted", "not_elf", ...), used in JSON and the verdict cache.
std::string_view ScanOutcomeName(ScanOutcome outcome);
// The inverse of ScanOutcomeName; false for an unknown name.
bool ParseScanOutcome(std::string_view name, ScanOutcome& out);

struct ScanVerdict {
  ScanOutcome outcome = ScanOutcome::kIoError;
  std::string reason;              // readable explanation; empty when accepted
  uint32_t interface_version = 0;  // the value read from the file; 0 when not found

  bool accepted() const { return outcome == ScanOutcome::kAccepted; }
};

// Pre-scans the file at `path` (opened O_RDONLY | O_NONBLOCK: a FIFO or device named *.so is
// rejected as kIoError without blocking).
ScanVerdict ScanPluginFile(const std::string& path);

// Pre-scans an open descriptor of a regular file of `size` bytes (reads with pread only).
ScanVerdict ScanPluginFd(int fd, uint64_t size);

// Pre-scans an in-memory image (tests, fuzzing); identical rules.
ScanVerdict ScanPluginImage(std::span<const unsigned char> image);

}  // namespace talaria::plugins
