#include "talaria/base/sibling_module.h"

#include <dlfcn.h>

#include <string>

#include "talaria/base/paths.h"

namespace talaria {

Result<const void*> LoadSiblingModuleTable(const char* file, const char* entry,
                                           std::string_view what, uint32_t abi, size_t table_size) {
  std::string error;
  void* handle = OpenSiblingModule(file, what, error);
  if (handle == nullptr) return Err(UnavailableError(error));
  const std::string path(file);
  using Entry = const void* (*)();
  auto entry_fn = reinterpret_cast<Entry>(::dlsym(handle, entry));
  const void* table = entry_fn != nullptr ? entry_fn() : nullptr;
  if (table == nullptr) return Err(UnavailableError(path + " does not export " + entry));
  const auto* head = static_cast<const SiblingModuleHead*>(table);
  if (head->abi != abi || head->table_size != table_size) {
    return Err(UnavailableError(path + " belongs to another build of talaria (module ABI " +
                                std::to_string(head->abi) + ", this libtalaria " +
                                std::to_string(abi) + "); reinstall them together"));
  }
  return table;
}

}  // namespace talaria
