// talaria audit verify: checks the audit log's hash chain (safety/audit_log.h).
#include <cstdio>

#include "cli/commands.h"
#include "talaria/audit/audit_log.h"
#include "talaria/base/paths.h"

namespace talaria::cli {

int RunAuditVerify(const AuditOptions& options) {
  const std::string path = options.file.empty() ? TalariaHome() + "/audit.jsonl" : options.file;
  auto verified = safety::VerifyAuditLog(path);
  if (!verified) {
    std::fprintf(stderr, "talaria audit verify: %s\n", verified.error().message().c_str());
    return kExitUsage;
  }
  if (!verified->intact) {
    std::printf("%s: TAMPERED: %s\n", path.c_str(), verified->problem.c_str());
    return kExitToolError;
  }
  std::printf("%s: intact, %llu lines", path.c_str(),
              static_cast<unsigned long long>(verified->lines));
  if (verified->unchained_lines > 0) {
    std::printf(" (the first %llu written before chaining, unchecked)",
                static_cast<unsigned long long>(verified->unchained_lines));
  }
  std::printf("\n");
  if (verified->head_missing) {
    std::printf("note: no head record beside it, so a cut-off end could not be checked\n");
  }
  return kExitOk;
}

}  // namespace talaria::cli
