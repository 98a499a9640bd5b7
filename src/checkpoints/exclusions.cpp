#include "checkpoints/exclusions.h"

#include <algorithm>
#include <array>

#include "talaria/base/ascii.h"

namespace talaria::checkpoints {
namespace {

constexpr std::array<std::string_view, 30> kDirs = {
    // version control (the user's repository is never read or written)
    ".git", ".hg", ".svn", ".bzr", ".jj", ".worktrees",
    // dependencies and virtual environments
    "node_modules", ".venv", "venv", ".tox", ".nox", "bower_components", ".pnpm-store",
    // build output
    "dist", "build", "target", ".next", ".nuxt", ".turbo", ".parcel-cache", ".gradle", "coverage",
    // caches
    ".cache", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "logs",
    ".terraform"};

constexpr std::array<std::string_view, 56> kExtensions = {
    // compiled code and libraries
    ".o", ".obj", ".a", ".so", ".dylib", ".dll", ".exe", ".class", ".jar", ".war", ".pyc", ".pyo",
    ".wasm", ".bin", ".lib", ".pdb",
    // images, audio, video, documents that are not text
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tif", ".tiff", ".psd", ".heic",
    ".mp3", ".mp4", ".mov", ".avi", ".mkv", ".wav", ".flac", ".ogg", ".webm", ".m4a", ".pdf",
    ".woff", ".woff2", ".ttf", ".otf",
    // archives and disk images
    ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".zst", ".iso", ".dmg",
    // databases and logs
    ".sqlite", ".sqlite3", ".log"};

bool EndsWithCaseless(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         EqualsIgnoringAsciiCase(text.substr(text.size() - suffix.size()), suffix);
}

}  // namespace

bool IsExcludedDirName(std::string_view name) {
  return std::find(kDirs.begin(), kDirs.end(), name) != kDirs.end() || name.ends_with(".egg-info");
}

bool IsExcludedFileName(std::string_view name) {
  // .env, .env.local, .envrc: secrets; never copied into a store the model cannot see either.
  if (name == ".env" || name.starts_with(".env.") || name == ".envrc") return true;
  if (name == ".DS_Store" || name == "Thumbs.db") return true;
  // A workspace write in progress (Workspace::WriteAtomic's temp file).
  if (name.find(".talaria-tmp-") != std::string_view::npos) return true;
  return std::any_of(kExtensions.begin(), kExtensions.end(),
                     [name](std::string_view ext) { return EndsWithCaseless(name, ext); });
}

}  // namespace talaria::checkpoints
