// "Did you mean?" for a path that does not exist: the closest names in its directory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "talaria/confinement/workspace.h"

namespace talaria::tools {

// Up to `max` existing entries of `path`'s directory whose names are close to its last
// component, best first, spelled like `path` (same directory prefix). Empty when the directory
// cannot be listed.
std::vector<std::string> SimilarFiles(const safety::Workspace& ws, std::string_view path,
                                      size_t max);

// Edit-distance similarity in [0, 1] of two names, case-insensitive.
double NameSimilarity(std::string_view a, std::string_view b);

}  // namespace talaria::tools
