// send_message's `target`: `platform`, `platform:#name`, `platform:name`, `platform:chat_id` or
// `platform:chat_id:thread_id`, resolved against the platform's settings into the chat (and
// thread) the API is called with.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "messaging/messaging_settings.h"
#include "talaria/base/status.h"

namespace talaria::messaging {

struct TargetRef {
  std::string platform;  // lower case
  std::string rest;      // what followed the first ':' (empty: the home channel)
};

struct Destination {
  std::string chat;    // the platform's id: channel, chat, room, number, address, topic
  std::string thread;  // thread/topic id, empty for none
};

// Splits at the first ':'. InvalidArgument for an empty target or platform.
Result<TargetRef> ParseTarget(std::string_view target);

// The destination `ref` names on `platform`: the home channel when ref.rest is empty, an
// explicit id when it has the platform's shape of one, else a name from its `channels`.
// Errors: FailedPrecondition (no home channel: says what to set), NotFound ("Could not resolve
// ... use action='list'"), InvalidArgument (an id of the wrong shape, a thread where the
// platform has none).
Result<Destination> ResolveTarget(const TargetRef& ref, const PlatformSettings& platform);

}  // namespace talaria::messaging
