// The platform table (sender.h).
#include "messaging/sender.h"

namespace talaria::messaging {

std::unique_ptr<Sender> MakeSender(const PlatformSettings& p) {
  if (p.name == "slack") return MakeSlackSender(p);
  if (p.name == "telegram") return MakeTelegramSender(p);
  if (p.name == "discord") return MakeDiscordSender(p);
  if (p.name == "matrix") return MakeMatrixSender(p);
  if (p.name == "signal") return MakeSignalSender(p);
  if (p.name == "email") return MakeEmailSender(p);
  if (p.name == "sms") return MakeSmsSender(p);
  if (p.name == "ntfy") return MakeNtfySender(p);
  if (p.name == "webhook") return MakeWebhookSender(p);
  return nullptr;
}

}  // namespace talaria::messaging
