// One platform's sending side: what send_message calls once the target is resolved and the text
// split. Every method reports success only when the platform's answer says it took the message
// (its ok flag, id or status checked), never because the request went out.
// Thread-safety: a Sender is used by one call at a time.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "messaging/chunker.h"
#include "messaging/messaging_settings.h"
#include "messaging/platform_http.h"
#include "messaging/target_ref.h"
#include "talaria/base/status.h"

namespace talaria::messaging {

// The most a file read for MEDIA may hold: what any platform here takes is at most this much
// once base64 or multipart framing is added to it.
inline constexpr size_t kMaxAttachmentBytes = size_t{20} << 20;

struct Attachment {
  std::string file_name;     // the base name
  std::string data;          // the file's bytes (empty for a URL)
  std::string url;           // MEDIA:https://...: the platform fetches it; talaria never does
  bool as_document = false;  // send as a file even when it is an image
};

class Sender {
 public:
  virtual ~Sender() = default;

  // The platform's message limit and how it counts; 0: no limit.
  virtual size_t limit() const = 0;
  virtual LengthUnit unit() const { return LengthUnit::kCodePoints; }
  // Whether SendFile/SendWithFiles take workspace files (native MEDIA:<path>) and URLs the
  // platform fetches itself (MEDIA:https://...).
  virtual bool sends_files() const { return false; }
  virtual bool sends_urls() const { return false; }
  // Why a MEDIA:<path> cannot go here (when !sends_files()): shown to the model.
  virtual std::string NoFilesReason() const { return "takes no attachments"; }
  // The largest file the platform takes, and how many attachments one message may carry (0: no
  // count limit). send_message checks both before anything is sent.
  virtual size_t max_file_bytes() const { return kMaxAttachmentBytes; }
  virtual size_t max_files() const { return 0; }
  // Whether React works here (remove: unreact).
  virtual bool reacts(bool /*remove*/) const { return false; }

  // Turns a resolved destination into what the API takes (a Slack user id opens a DM, a Matrix
  // alias becomes a room id). Default: as it is.
  virtual Result<Destination> Prepare(Destination d, const CallLimits& /*limits*/) { return d; }
  // Sends one part; the platform's id of the message it made.
  virtual Result<std::string> Send(const Destination& d, std::string_view text,
                                   const CallLimits& limits) = 0;
  // Sends one file with an optional caption. REQUIRES: sends_files().
  virtual Result<std::string> SendFile(const Destination& /*d*/, const Attachment& /*file*/,
                                       std::string_view /*caption*/, const CallLimits& /*limits*/) {
    return Err(FailedPreconditionError("this platform takes no attachments"));
  }
  // Whether the text and every file go out as ONE message (e-mail: a MIME multipart; the
  // webhook: one JSON body; SMS: one MMS). Then send_message sends the text's leading parts with
  // Send and the last part with every file through one SendWithFiles.
  virtual bool bundles_files() const { return false; }
  // Sends `text` (may be empty) with `files` attached. REQUIRES: bundles_files().
  virtual Result<std::string> SendWithFiles(const Destination& /*d*/, std::string_view /*text*/,
                                            const std::vector<Attachment>& /*files*/,
                                            const CallLimits& /*limits*/) {
    return Err(FailedPreconditionError("this platform sends files one at a time"));
  }
  // Adds (or removes) `emoji` on message `message_id`. REQUIRES: reacts(remove).
  virtual Status React(const Destination& /*d*/, std::string_view /*message_id*/,
                       std::string_view /*emoji*/, bool /*remove*/, const CallLimits& /*limits*/) {
    return FailedPreconditionError("this platform has no reactions");
  }
};

// The sender for `platform` (one of KnownPlatforms()). REQUIRES: platform.enabled.
std::unique_ptr<Sender> MakeSender(const PlatformSettings& platform);

// Per platform, in their own files.
std::unique_ptr<Sender> MakeSlackSender(const PlatformSettings& p);
std::unique_ptr<Sender> MakeTelegramSender(const PlatformSettings& p);
std::unique_ptr<Sender> MakeDiscordSender(const PlatformSettings& p);
std::unique_ptr<Sender> MakeMatrixSender(const PlatformSettings& p);
std::unique_ptr<Sender> MakeSignalSender(const PlatformSettings& p);
std::unique_ptr<Sender> MakeEmailSender(const PlatformSettings& p);
std::unique_ptr<Sender> MakeSmsSender(const PlatformSettings& p);
std::unique_ptr<Sender> MakeNtfySender(const PlatformSettings& p);
std::unique_ptr<Sender> MakeWebhookSender(const PlatformSettings& p);

}  // namespace talaria::messaging
