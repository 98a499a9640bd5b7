#include "talaria/base/paths.h"

#include <dlfcn.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

namespace talaria {

std::string TalariaHome() {
  if (const char* h = std::getenv("TALARIA_HOME"); h != nullptr && *h != '\0') return h;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.talaria";
  }
  return ".talaria";
}

std::string UserHome() {
  if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr)
    return pw->pw_dir;
  const char* home = std::getenv("HOME");
  return home != nullptr ? home : "";
}

std::string ShellHome() {
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return home;
  return UserHome();
}

std::string LibraryDirectory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&LibraryDirectory), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string FindBesideLibrary(const char* env_var, std::string_view name) {
  if (const char* set = std::getenv(env_var); set != nullptr && *set != '\0') return set;
  const std::string dir = LibraryDirectory();
  if (dir.empty()) return {};
  std::string path = dir + std::string(name);
  return ::access(path.c_str(), X_OK) == 0 ? path : std::string();
}

void* OpenSiblingModule(std::string_view file, std::string_view what, std::string& error) {
  const std::string dir = LibraryDirectory();
  if (dir.empty()) {
    error = std::string(what) + " is not available: the directory of libtalaria is unknown";
    return nullptr;
  }
  const std::string path = dir + std::string(file);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    error = std::string(what) + " is not available (" + path +
            "): " + (why != nullptr ? why : "dlopen failed");
  }
  return handle;
}

}  // namespace talaria
