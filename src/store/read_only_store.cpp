// SessionStore::OpenReadOnly: a store that only recalls (what `talaria mcp` serves
// session_search from), and the recall members' defaults for stores that do not recall.
#include <sys/stat.h>

#include "store/recall_reader.h"
#include "talaria/store/session_store.h"

namespace talaria::store {
namespace {

Status ReadOnly() {
  return FailedPreconditionError("the sessions database is open read-only (session search)");
}

class ReadOnlySessionStore final : public SessionStore {
 public:
  explicit ReadOnlySessionStore(std::string path) : recall_(std::move(path)) {}

  Result<SessionRow> CreateSession(const NewSession&) override { return Err(ReadOnly()); }
  Result<std::optional<SessionRow>> GetSession(std::string_view id) override {
    auto lineage = TALARIA_TRY(recall_.Lineage(id));
    for (SessionRow& row : lineage) {
      if (row.id == id) return std::optional<SessionRow>(std::move(row));
    }
    return std::optional<SessionRow>();
  }
  Result<std::vector<SessionRow>> ListSessions(const ListOptions&) override {
    return Err(ReadOnly());
  }
  Result<std::optional<SessionRow>> LatestSession(std::string_view) override {
    return Err(ReadOnly());
  }
  Status SetTitle(std::string_view, std::string_view) override { return ReadOnly(); }
  Status EndSession(std::string_view, std::string_view) override { return ReadOnly(); }
  Status DeleteSession(std::string_view) override { return ReadOnly(); }
  Status AppendMessage(std::string_view, StoredMessage&) override { return ReadOnly(); }
  Status AppendMessages(std::string_view, std::vector<StoredMessage>&) override {
    return ReadOnly();
  }
  Result<std::vector<StoredMessage>> LoadHistory(std::string_view) override {
    return Err(ReadOnly());
  }
  Result<std::vector<StoredMessage>> LoadTranscript(std::string_view) override {
    return Err(ReadOnly());
  }
  Status AppendCompaction(std::string_view, std::string_view,
                          const std::vector<StoredMessage>&) override {
    return ReadOnly();
  }
  Result<size_t> RepairInterrupted(std::string_view) override { return Err(ReadOnly()); }
  Status PutState(std::string_view, std::string_view, const Json&) override { return ReadOnly(); }
  Result<std::optional<Json>> GetState(std::string_view, std::string_view) override {
    return Err(ReadOnly());
  }
  Result<TokenTotals> SumUsage(std::string_view) override { return Err(ReadOnly()); }
  Result<std::vector<SearchHit>> Search(std::string_view, const SearchOptions&) override {
    return Err(ReadOnly());
  }

  Result<RecallSearchResult> RecallSearch(std::string_view query,
                                          const RecallSearchOptions& options) override {
    return recall_.Search(query, options);
  }
  Result<std::vector<SessionRow>> Lineage(std::string_view session_id) override {
    return recall_.Lineage(session_id);
  }
  Result<std::optional<RecallMessage>> GetMessage(int64_t message_id) override {
    return recall_.GetMessage(message_id);
  }
  Result<MessageWindow> ReadWindow(std::string_view session_id,
                                   const MessageWindowOptions& options) override {
    return recall_.ReadWindow(session_id, options);
  }
  Result<std::vector<SessionPreview>> Browse(const BrowseOptions& options) override {
    return recall_.Browse(options);
  }

 private:
  RecallReader recall_;
};

Status NoRecall() {
  return FailedPreconditionError("this session store does not support session search");
}

}  // namespace

Result<std::unique_ptr<SessionStore>> SessionStore::OpenReadOnly(const std::string& path_in) {
  if (path_in.empty()) return Err(InvalidArgumentError("empty sessions database path"));
  std::string path = path_in.starts_with("file:") ? "./" + path_in : path_in;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Err(NotFoundError("no sessions database at " + path));
  return std::unique_ptr<SessionStore>(std::make_unique<ReadOnlySessionStore>(std::move(path)));
}

Result<RecallSearchResult> SessionStore::RecallSearch(std::string_view,
                                                      const RecallSearchOptions&) {
  return Err(NoRecall());
}
Result<std::vector<SessionRow>> SessionStore::Lineage(std::string_view) { return Err(NoRecall()); }
Result<std::optional<RecallMessage>> SessionStore::GetMessage(int64_t) { return Err(NoRecall()); }
Result<MessageWindow> SessionStore::ReadWindow(std::string_view, const MessageWindowOptions&) {
  return Err(NoRecall());
}
Result<std::vector<SessionPreview>> SessionStore::Browse(const BrowseOptions&) {
  return Err(NoRecall());
}

}  // namespace talaria::store
