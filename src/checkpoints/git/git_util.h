// libgit2 handles as unique_ptrs and libgit2 errors as Status. libgit2 stays inside
// src/checkpoints: no public header names it.
// Thread-safety: InitLibgit2 is thread-safe (once per process); the handles are not shared.
#pragma once

#include <git2.h>

#include <memory>
#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::checkpoints {

template <typename T, void (*Free)(T*)>
struct GitFree {
  void operator()(T* p) const {
    if (p != nullptr) Free(p);
  }
};

using RepoPtr = std::unique_ptr<git_repository, GitFree<git_repository, git_repository_free>>;
using IndexPtr = std::unique_ptr<git_index, GitFree<git_index, git_index_free>>;
using TreePtr = std::unique_ptr<git_tree, GitFree<git_tree, git_tree_free>>;
using CommitPtr = std::unique_ptr<git_commit, GitFree<git_commit, git_commit_free>>;
using BlobPtr = std::unique_ptr<git_blob, GitFree<git_blob, git_blob_free>>;
using DiffPtr = std::unique_ptr<git_diff, GitFree<git_diff, git_diff_free>>;
using DiffStatsPtr = std::unique_ptr<git_diff_stats, GitFree<git_diff_stats, git_diff_stats_free>>;
using SignaturePtr = std::unique_ptr<git_signature, GitFree<git_signature, git_signature_free>>;
using RefPtr = std::unique_ptr<git_reference, GitFree<git_reference, git_reference_free>>;
using TreeEntryPtr = std::unique_ptr<git_tree_entry, GitFree<git_tree_entry, git_tree_entry_free>>;

// Initialises libgit2 once per process and keeps it from reading the user's git config files
// (the shadow store must behave the same on every machine). Internal when libgit2 refuses.
Status InitLibgit2();

// Internal "checkpoints: <what>: <libgit2's last error>".
Status GitError(std::string_view what);

std::string OidHex(const git_oid& oid);

}  // namespace talaria::checkpoints
