// SqliteSessionStore's recall members: forwarded to its RecallReader, which reads on a
// connection of its own, so a search never takes the writer's mutex or its connection.
#include "store/sqlite_session_store.h"

namespace talaria::store {

Result<RecallSearchResult> SqliteSessionStore::RecallSearch(std::string_view query,
                                                            const RecallSearchOptions& options) {
  return recall_.Search(query, options);
}

Result<std::vector<SessionRow>> SqliteSessionStore::Lineage(std::string_view session_id) {
  return recall_.Lineage(session_id);
}

Result<std::optional<RecallMessage>> SqliteSessionStore::GetMessage(int64_t message_id) {
  return recall_.GetMessage(message_id);
}

Result<MessageWindow> SqliteSessionStore::ReadWindow(std::string_view session_id,
                                                     const MessageWindowOptions& options) {
  return recall_.ReadWindow(session_id, options);
}

Result<std::vector<SessionPreview>> SqliteSessionStore::Browse(const BrowseOptions& options) {
  return recall_.Browse(options);
}

}  // namespace talaria::store
