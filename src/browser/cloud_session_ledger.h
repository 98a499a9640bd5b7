// A durable record of the cloud browser sessions this machine's talaria processes created, so a
// session whose owner was killed (SIGKILL, a crash, a power cut) is released by the next talaria
// that opens a browser, instead of running and billing until the provider's own timeout.
//
//   $TALARIA_HOME/run/cloud-browsers/           0700
//     <provider>.<session id>.json              {"provider","session_id","owner_pid",
//                                               "owner_start","created_ms", "route" when the
//                                               provider has two}, written atomically
//
// Recorded right after the provider answered the create and before anything else can fail;
// forgotten once the session was released. A record whose owner process is gone (its pid is
// not running, or runs a process started at another time: pids are reused) is a leftover.
//
// Thread-safety: free functions; thread-safe, and safe between processes (a sweeper claims a
// record by renaming it, so two sweepers never release one session twice).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/browser/browser_provider.h"

namespace talaria::browser {

// The ledger's directory (under $TALARIA_HOME/run).
std::string CloudLedgerDir();

// Records `browser` as owned by this process. Errors: the directory or file cannot be written.
Status RecordCloudSession(const RemoteBrowser& browser);
// Removes the record (after a release that succeeded).
void ForgetCloudSession(const RemoteBrowser& browser);

// Releases the sessions of dead owners with `release` (the provider named in the record is
// `browser.provider`); a release that fails puts the record back for the next sweep. Returns
// the sessions released. Cheap when the directory is empty or absent (one opendir).
using CloudReleaser = std::function<Status(const RemoteBrowser& browser)>;
std::vector<RemoteBrowser> ReleaseLeftoverCloudSessions(const CloudReleaser& release);

// `provider` with every session it creates recorded (before Acquire returns; a session that
// cannot be recorded is released and the error returned) and forgotten once released.
std::shared_ptr<BrowserProvider> RecordingCloudSessions(std::shared_ptr<BrowserProvider> provider);

// ReleaseLeftoverCloudSessions with the provider each record names, made from the current
// settings (provider_factories.cpp). What a browser's first start runs.
void ReleaseLeftoverCloudBrowsers();

}  // namespace talaria::browser
