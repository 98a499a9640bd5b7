#include "support/sandbox_control_plane.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <stop_token>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "talaria/base/base64.h"
#include "talaria/base/random.h"
#include "talaria/base/subprocess.h"

namespace talaria::test_support {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kOutputCap = size_t{64} << 20;

std::string ConnectEnvelope(uint8_t flags, const std::string& payload) {
  std::string out(1, static_cast<char>(flags));
  const auto n = static_cast<uint32_t>(payload.size());
  for (int s : {24, 16, 8, 0}) out += static_cast<char>((n >> s) & 0xFF);
  return out + payload;
}

struct Exec {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::string status = "running";
  std::string output;
  int returncode = 0;
  std::stop_source stop;
  int poll_404s_left = 0;
  int poll_drops_left = 0;
};

struct Sandbox {
  std::string id;
  std::string dialect;
  std::string dir;
  std::string tmp;
  std::string state = "started";
  json labels = json::object();
  std::string token;
  Clock::time_point ready_at;
  Clock::time_point last_used;
  int build_409s_left = 0;
  std::map<std::string, std::shared_ptr<Exec>> execs;  // by exec id
  std::string k8s_namespace;
  json k8s_object;
  std::string claim;  // the SandboxClaim holding it; empty: none
  json claim_object;
};

// A copy of `from` at `to` (made, or emptied first): directories, regular files and symbolic
// links; what else a sandbox leaves (FIFOs, sockets) is not part of a filesystem snapshot.
void CopyTree(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove_all(to, ec);
  fs::create_directories(to, ec);
  for (auto it = fs::recursive_directory_iterator(from, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path target = fs::path(to) / fs::relative(it->path(), from);
    std::error_code one;
    const fs::file_status st = it->symlink_status(one);
    if (fs::is_directory(st)) {
      fs::create_directories(target, one);
    } else if (fs::is_regular_file(st)) {
      fs::copy_file(it->path(), target, fs::copy_options::overwrite_existing, one);
    } else if (fs::is_symlink(st)) {
      fs::copy_symlink(it->path(), target, one);
    }
  }
}

bool BwrapWorks() {
  SpawnOptions probe;
  probe.argv = {"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--", "true"};
  probe.timeout = std::chrono::seconds(10);
  auto r = RunProcess(probe);
  return r && r->exit_code == 0;
}

class ControlPlane final : public SandboxControlPlane {
 public:
  explicit ControlPlane(SandboxControlPlaneOptions o) : o_(std::move(o)) {
    jailed_ = o_.jail && BwrapWorks();
    if (o_.tls_cert_file.empty()) {
      server_ = std::make_unique<httplib::Server>();
    } else {
      server_ = std::make_unique<httplib::SSLServer>(
          o_.tls_cert_file.c_str(), o_.tls_key_file.c_str(),
          o_.client_ca_file.empty() ? nullptr : o_.client_ca_file.c_str());
    }
    server_->new_task_queue = [n = o_.threads] { return new httplib::ThreadPool(n); };
    server_->set_keep_alive_max_count(100000);
    // stop() waits for idle kept-alive connections this long.
    server_->set_keep_alive_timeout(1);
    server_->set_tcp_nodelay(true);
    Routes();
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    for (int i = 0; i < 5000 && !server_->is_running(); ++i)
      std::this_thread::sleep_for(milliseconds(1));
    if (o_.idle_reap > milliseconds::zero()) {
      reaper_ = std::jthread([this](std::stop_token stop) { ReapIdle(stop); });
    }
  }

  ~ControlPlane() override {
    reaper_ = {};
    {
      std::lock_guard lock(mu_);
      for (auto& [id, s] : sandboxes_) StopAll(*s);
    }
    server_->stop();
    thread_.join();
    // Launched execs were told to stop above; they end within the kill grace.
    for (int i = 0; i < 1000 && launched_.load() > 0; ++i)
      std::this_thread::sleep_for(milliseconds(10));
    std::error_code ec;
    std::filesystem::remove_all(o_.root + "/sandboxes", ec);
    std::filesystem::remove_all(o_.root + "/snapshots", ec);
  }

  std::string url() const override {
    return (o_.tls_cert_file.empty() ? "http://127.0.0.1:" : "https://127.0.0.1:") +
           std::to_string(port_);
  }
  std::vector<std::string> live_namespaces() const override {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& [id, s] : sandboxes_) {
      if (s->dialect == "kubernetes") out.push_back(s->k8s_namespace);
    }
    return out;
  }
  FakeSandboxCounts counts() const override {
    std::lock_guard lock(mu_);
    FakeSandboxCounts c = counts_;
    c.live = static_cast<int>(sandboxes_.size());
    return c;
  }
  std::vector<std::string> live_owners() const override {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& [id, s] : sandboxes_) {
      if (s->labels.contains("talaria.owner") && s->labels["talaria.owner"].is_string())
        out.push_back(s->labels["talaria.owner"].get<std::string>());
    }
    return out;
  }
  std::chrono::nanoseconds exec_time() const override {
    return std::chrono::nanoseconds(exec_ns_.load());
  }
  bool jailed() const override { return jailed_; }
  void SetNoopExecs(bool noop, std::chrono::microseconds hold) override {
    noop_hold_us_ = hold.count();
    noop_execs_ = noop;
  }
  void SetApiKey(std::string key) override {
    std::lock_guard lock(key_mu_);
    o_.api_key = std::move(key);
  }

 private:
  // --- plumbing

  bool Authorized(const httplib::Request& req, httplib::Response& res, bool api_key_header) {
    std::string key;
    {
      std::lock_guard lock(key_mu_);
      key = o_.api_key;
    }
    bool ok = api_key_header ? req.get_header_value("X-API-Key") == key
                             : req.get_header_value("Authorization") == "Bearer " + key;
    if (!ok && !api_key_header && !req.has_header("Authorization") &&
        ClientCertCn(req) == o_.client_cert_cn) {
      std::lock_guard lock(mu_);
      ++counts_.client_cert_auths;
      ok = true;
    }
    if (!ok) {
      std::lock_guard lock(mu_);
      ++counts_.auth_failures;
      res.status = 401;
      res.set_content(R"({"message":"unauthorized"})", "application/json");
    }
    return ok;
  }

  // The CN of the verified client certificate the request came with; empty: none.
  std::string ClientCertCn(const httplib::Request& req) const {
    if (o_.client_ca_file.empty() || req.ssl == nullptr) return "";
    X509* peer = SSL_get1_peer_certificate(req.ssl);
    if (peer == nullptr) return "";
    char cn[256] = {};
    const int n =
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof cn);
    X509_free(peer);
    return n > 0 && SSL_get_verify_result(req.ssl) == X509_V_OK ? std::string(cn, n) : "";
  }

  static void Json(httplib::Response& res, int status, const json& body) {
    res.status = status;
    // Output that is not UTF-8 is replaced, as a JSON service must.
    res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  }
  static void Error(httplib::Response& res, int status, const std::string& message) {
    Json(res, status, {{"error", message}, {"message", message}, {"code", status}});
  }
  static bool Body(const httplib::Request& req, httplib::Response& res, json& out) {
    out = json::parse(req.body, nullptr, false);
    if (out.is_discarded() || !out.is_object()) {
      Error(res, 400, "body is not a JSON object");
      return false;
    }
    return true;
  }

  // Where a Modal logical key's filesystem snapshot is kept (the key hex-encoded: any text).
  std::string SnapshotDir(const json& logical_key) const {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string name;
    for (const unsigned char c : logical_key.is_string() ? logical_key.get<std::string>() : "") {
      name += kHex[c >> 4];
      name += kHex[c & 15];
    }
    return o_.root + "/snapshots/k" + name;
  }

  std::shared_ptr<Sandbox> NewSandbox(const std::string& dialect, std::string id) {
    auto s = std::make_shared<Sandbox>();
    s->id = std::move(id);
    s->dialect = dialect;
    s->dir = o_.root + "/sandboxes/" + s->id;
    s->tmp = s->dir + "/tmp";
    std::filesystem::create_directories(s->tmp);
    ::chmod(s->tmp.c_str(), 01777);
    s->token = RandomHex(12);
    s->ready_at = Clock::now() + o_.claim_delay;
    s->last_used = Clock::now();
    s->build_409s_left = o_.modal_build_409s;
    ++counts_.created;
    sandboxes_[s->id] = s;
    return s;
  }

  std::shared_ptr<Sandbox> Find(const std::string& id) {
    std::lock_guard lock(mu_);
    auto it = sandboxes_.find(id);
    if (it == sandboxes_.end()) return nullptr;
    it->second->last_used = Clock::now();
    return it->second;
  }

  static void StopAll(Sandbox& s) {
    for (auto& [id, e] : s.execs) e->stop.request_stop();
  }

  void Delete(const std::string& id) {
    std::shared_ptr<Sandbox> s;
    {
      std::lock_guard lock(mu_);
      auto it = sandboxes_.find(id);
      if (it == sandboxes_.end()) return;
      s = it->second;
      StopAll(*s);
      sandboxes_.erase(it);
    }
    std::error_code ec;
    std::filesystem::remove_all(s->dir, ec);
  }

  void ReapIdle(const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      std::this_thread::sleep_for(milliseconds(50));
      std::vector<std::string> idle;
      {
        std::lock_guard lock(mu_);
        for (const auto& [id, s] : sandboxes_) {
          bool running = false;
          for (const auto& [eid, e] : s->execs) {
            std::lock_guard el(e->mu);
            running = running || !e->done;
          }
          if (!running && Clock::now() - s->last_used > o_.idle_reap) idle.push_back(id);
        }
        counts_.reaped_idle += static_cast<int>(idle.size());
      }
      for (const std::string& id : idle) Delete(id);
    }
  }

  // Runs `shell -c command` in the sandbox's jail as one process group.
  ProcessResult RunIn(Sandbox& s, const std::string& shell, const std::string& command,
                      milliseconds timeout, std::stop_token stop, const std::string& stdin_data) {
    SpawnOptions spawn;
    if (jailed_) {
      spawn.argv = {"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--bind", s.tmp, "/tmp"};
      if (!o_.workspace.empty()) {
        spawn.argv.insert(spawn.argv.end(), {"--bind", o_.workspace, o_.workspace});
      }
      spawn.argv.insert(spawn.argv.end(), {"--die-with-parent", "--chdir", "/", "--"});
    }
    spawn.argv.insert(spawn.argv.end(), {shell, "-c", command});
    spawn.cwd = "/";
    spawn.timeout = timeout;
    spawn.cancel = std::move(stop);
    spawn.stdin_data = stdin_data;
    spawn.merge_stderr = true;
    spawn.max_output_bytes = kOutputCap;
    spawn.kill_grace = milliseconds(500);
    const auto started = Clock::now();
    auto r = RunProcess(spawn);
    exec_ns_ +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - started).count();
    {
      std::lock_guard lock(mu_);
      ++counts_.execs;
      s.last_used = Clock::now();
    }
    if (!r) {
      ProcessResult failed;
      failed.exit_code = 127;
      failed.stdout_text = r.error().ToString();
      return failed;
    }
    return std::move(*r);
  }

  // Runs an exec on its own thread; `e` completes when it ends.
  void Launch(const std::shared_ptr<Sandbox>& s, const std::shared_ptr<Exec>& e,
              std::string command, milliseconds timeout, std::string stdin_data) {
    ++launched_;
    std::thread([this, s, e, command = std::move(command), timeout,
                 stdin_data = std::move(stdin_data)] {
      ProcessResult r = RunIn(*s, "bash", command, timeout, e->stop.get_token(), stdin_data);
      std::lock_guard lock(e->mu);
      e->output = std::move(r.stdout_text);
      e->returncode = r.exit_code;
      e->status = r.timed_out        ? "timeout"
                  : r.cancelled      ? "cancelled"
                  : r.exit_code == 0 ? "completed"
                                     : "failed";
      e->done = true;
      e->cv.notify_all();
      --launched_;
    }).detach();
  }

  static json ModalExecBody(const std::string& id, Exec& e) {
    json body = {{"execId", id}, {"status", e.status}};
    if (e.done) {
      body["output"] = e.output;
      body["returncode"] = e.returncode;
    }
    return body;
  }

  // --- the dialects

  void Routes() {
    // Managed Modal gateway.
    server_->Post("/v1/sandboxes", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorized(req, res, false)) return;
      json body;
      if (!Body(req, res, body)) return;
      const std::string key = req.get_header_value("x-idempotency-key");
      if (key.empty()) return Error(res, 400, "x-idempotency-key is required");
      for (const char* field : {"image", "cwd", "logicalKey"}) {
        if (!body.contains(field) || !body[field].is_string())
          return Error(res, 400, std::string(field) + " must be a string");
      }
      for (const char* field : {"cpu", "memoryMiB", "timeoutMs", "idleTimeoutMs"}) {
        if (!body.contains(field) || !body[field].is_number())
          return Error(res, 400, std::string(field) + " must be a number");
      }
      if (!body.contains("persistentFilesystem") || !body["persistentFilesystem"].is_boolean())
        return Error(res, 400, "persistentFilesystem must be a boolean");
      std::lock_guard lock(mu_);
      ++counts_.create_requests;
      std::string id;
      if (auto it = idempotency_.find(key); it != idempotency_.end()) {
        id = it->second;
      } else {
        auto s = NewSandbox("modal", "sb-" + RandomHex(8));
        s->labels["logicalKey"] = body["logicalKey"];
        // A persistent filesystem starts from the last snapshot of its logical key.
        const std::string snapshot = SnapshotDir(body["logicalKey"]);
        if (body["persistentFilesystem"].get<bool>() && std::filesystem::exists(snapshot)) {
          CopyTree(snapshot, s->tmp);
          ++counts_.restores;
        }
        idempotency_[key] = s->id;
        id = s->id;
      }
      // The sandbox exists; the answer is lost (the client must retry with the same key).
      if (failures_left_ < o_.create_failures_after_create) {
        ++failures_left_;
        return Error(res, 503, "gateway overloaded");
      }
      Json(res, 200, {{"id", id}});
    });
    server_->Post(R"(/v1/sandboxes/([^/]+)/execs)", [this](const httplib::Request& req,
                                                           httplib::Response& res) {
      if (!Authorized(req, res, false)) return;
      auto s = Find(req.matches[1]);
      if (!s) return Error(res, 404, "sandbox not found");
      json body;
      if (!Body(req, res, body)) return;
      if (!body.contains("execId") || !body["execId"].is_string() || !body.contains("command") ||
          !body["command"].is_string() || !body.contains("timeoutMs") ||
          !body["timeoutMs"].is_number_integer()) {
        return Error(res, 400, "execId, command and timeoutMs are required");
      }
      const std::string exec_id = body["execId"];
      std::shared_ptr<Exec> e;
      {
        std::lock_guard lock(mu_);
        if (s->build_409s_left > 0) {
          --s->build_409s_left;
          return Error(res, 409, "sandbox is still building");
        }
        auto [it, fresh] = s->execs.try_emplace(exec_id);
        if (fresh) {
          it->second = std::make_shared<Exec>();
          it->second->poll_404s_left = o_.modal_poll_404s;
          it->second->poll_drops_left = o_.modal_poll_drops;
        }
        e = it->second;
        if (fresh) {
          Launch(s, e, body["command"], milliseconds(body["timeoutMs"].get<int64_t>()),
                 body.value("stdinData", std::string()));
        }
      }
      std::unique_lock lock(e->mu);
      e->cv.wait_for(lock, o_.modal_exec_wait, [&] { return e->done; });
      Json(res, 200, ModalExecBody(exec_id, *e));
    });
    server_->Get(R"(/v1/sandboxes/([^/]+)/execs/([^/]+))", [this](const httplib::Request& req,
                                                                  httplib::Response& res) {
      if (!Authorized(req, res, false)) return;
      auto s = Find(req.matches[1]);
      if (!s) return Error(res, 404, "sandbox not found");
      std::shared_ptr<Exec> e;
      {
        std::lock_guard lock(mu_);
        auto it = s->execs.find(req.matches[2]);
        if (it != s->execs.end()) e = it->second;
      }
      if (!e) return Error(res, 404, "exec not found");
      std::unique_lock lock(e->mu);
      if (e->poll_404s_left > 0) {
        --e->poll_404s_left;
        return Error(res, 404, "exec not found");
      }
      if (e->poll_drops_left > 0) {
        --e->poll_drops_left;
        // Promises a body and sends none: the client sees the connection cut.
        res.set_content_provider(1000, "application/json",
                                 [](size_t, size_t, httplib::DataSink&) { return false; });
        return;
      }
      Json(res, 200, ModalExecBody(req.matches[2], *e));
    });
    server_->Post(R"(/v1/sandboxes/([^/]+)/execs/([^/]+)/cancel)",
                  [this](const httplib::Request& req, httplib::Response& res) {
                    if (!Authorized(req, res, false)) return;
                    auto s = Find(req.matches[1]);
                    if (!s) return Error(res, 404, "sandbox not found");
                    std::lock_guard lock(mu_);
                    auto it = s->execs.find(req.matches[2]);
                    if (it == s->execs.end()) return Error(res, 404, "exec not found");
                    it->second->stop.request_stop();
                    Json(res, 200, {{"execId", it->first}, {"status", "cancelling"}});
                  });
    server_->Post(R"(/v1/sandboxes/([^/]+)/terminate)",
                  [this](const httplib::Request& req, httplib::Response& res) {
                    if (!Authorized(req, res, false)) return;
                    json body;
                    if (!Body(req, res, body)) return;
                    if (!body.contains("snapshotBeforeTerminate") ||
                        !body["snapshotBeforeTerminate"].is_boolean())
                      return Error(res, 400, "snapshotBeforeTerminate must be a boolean");
                    auto s = Find(req.matches[1]);
                    if (!s) return Error(res, 404, "sandbox not found");
                    json answer = {{"status", "terminated"}};
                    if (body["snapshotBeforeTerminate"]) {
                      // Its filesystem (the sandbox's own /tmp here) under its logical key.
                      std::lock_guard lock(mu_);
                      StopAll(*s);
                      CopyTree(s->tmp, SnapshotDir(s->labels["logicalKey"]));
                      ++counts_.snapshots;
                      answer["snapshotId"] = "im-" + RandomHex(6);
                    }
                    Delete(req.matches[1]);
                    Json(res, 200, answer);
                  });

    // Daytona.
    server_->Post("/sandbox", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorized(req, res, false)) return;
      json body;
      if (!Body(req, res, body)) return;
      if (body.contains("labels") && !body["labels"].is_object())
        return Error(res, 400, "labels must be an object");
      std::lock_guard lock(mu_);
      ++counts_.create_requests;
      auto s = NewSandbox("daytona", NewUuidLike());
      s->labels = body.value("labels", json::object());
      s->state = o_.claim_delay > milliseconds::zero() ? "starting" : "started";
      Json(res, 200, DaytonaBody(*s));
    });
    server_->Get("/sandbox", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorized(req, res, false)) return;
      // labels: a JSON object of label values every listed sandbox carries.
      json filter = json::object();
      if (req.has_param("labels")) {
        filter = json::parse(req.get_param_value("labels"), nullptr, false);
        if (filter.is_discarded() || !filter.is_object())
          return Error(res, 400, "labels must be a JSON object");
      }
      std::lock_guard lock(mu_);
      if (!filter.empty()) ++counts_.label_queries;
      json items = json::array();
      for (auto& [id, s] : sandboxes_) {
        if (s->dialect != "daytona") continue;
        bool match = true;
        for (const auto& [k, v] : filter.items())
          match = match && s->labels.contains(k) && s->labels[k] == v;
        if (match) items.push_back(DaytonaBody(*s));
      }
      Json(res, 200, items);
    });
    server_->Put(R"(/sandbox/([^/]+)/labels)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   if (!Authorized(req, res, false)) return;
                   auto s = Find(req.matches[1]);
                   if (!s || s->dialect != "daytona") return Error(res, 404, "sandbox not found");
                   json body;
                   if (!Body(req, res, body)) return;
                   if (!body.contains("labels") || !body["labels"].is_object())
                     return Error(res, 400, "labels must be an object");
                   for (const auto& [k, v] : body["labels"].items()) {
                     if (!v.is_string()) return Error(res, 400, "label " + k + " is not a string");
                   }
                   std::lock_guard lock(mu_);
                   ++counts_.label_updates;
                   s->labels = body["labels"];
                   Json(res, 200, {{"labels", s->labels}});
                 });
    server_->Get(R"(/sandbox/([^/]+))",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   if (!Authorized(req, res, false)) return;
                   auto s = Find(req.matches[1]);
                   if (!s || s->dialect != "daytona") return Error(res, 404, "sandbox not found");
                   std::lock_guard lock(mu_);
                   Json(res, 200, DaytonaBody(*s));
                 });
    server_->Delete(R"(/sandbox/([^/]+))",
                    [this](const httplib::Request& req, httplib::Response& res) {
                      if (!Authorized(req, res, false)) return;
                      if (!Find(req.matches[1])) return Error(res, 404, "sandbox not found");
                      Delete(req.matches[1]);
                      res.status = 200;
                    });
    server_->Post(R"(/sandbox/([^/]+)/(start|stop))",
                  [this](const httplib::Request& req, httplib::Response& res) {
                    if (!Authorized(req, res, false)) return;
                    auto s = Find(req.matches[1]);
                    if (!s) return Error(res, 404, "sandbox not found");
                    std::lock_guard lock(mu_);
                    if (req.matches[2] == "stop") StopAll(*s);
                    s->state = req.matches[2] == "stop" ? "stopped" : "started";
                    Json(res, 200, DaytonaBody(*s));
                  });
    server_->Post(R"(/toolbox/([^/]+)/toolbox/process/execute)", [this](const httplib::Request& req,
                                                                        httplib::Response& res) {
      if (!Authorized(req, res, false)) return;
      auto s = Find(req.matches[1]);
      if (!s) return Error(res, 404, "sandbox not found");
      json body;
      if (!Body(req, res, body)) return;
      if (!body.contains("command") || !body["command"].is_string())
        return Error(res, 400, "command is required");
      {
        std::lock_guard lock(mu_);
        if (s->state != "started") return Error(res, 400, "sandbox is not started");
      }
      if (noop_execs_) {
        if (const int64_t hold = noop_hold_us_.load(); hold > 0) {
          const auto started = Clock::now();
          std::this_thread::sleep_for(std::chrono::microseconds(hold));
          exec_ns_ +=
              std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - started).count();
        }
        return Json(res, 200, {{"exitCode", 0}, {"result", ""}});
      }
      const int64_t timeout_s = body.value("timeout", int64_t{10});
      auto e = Track(*s);
      ProcessResult r =
          RunIn(*s, "sh", body["command"], milliseconds(timeout_s * 1000), e->stop.get_token(), "");
      Untrack(*s, e);
      Json(res, 200, {{"exitCode", r.exit_code}, {"result", r.stdout_text}});
    });

    // E2B control plane and envd.
    server_->Post("/sandboxes", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorized(req, res, true)) return;
      json body;
      if (!Body(req, res, body)) return;
      if (!body.contains("templateID") || !body["templateID"].is_string())
        return Error(res, 400, "templateID is required");
      std::lock_guard lock(mu_);
      ++counts_.create_requests;
      auto s = NewSandbox("e2b", "i" + RandomHex(10));
      s->labels = body.value("metadata", json::object());
      Json(res, 201,
           {{"templateID", body["templateID"]},
            {"sandboxID", s->id},
            {"clientID", "fake"},
            {"envdVersion", "0.2.0"},
            {"alias", body["templateID"]},
            {"envdAccessToken", s->token},
            {"trafficAccessToken", nullptr},
            {"domain", "127.0.0.1.nip.io"}});
    });
    server_->Get("/v2/sandboxes", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorized(req, res, true)) return;
      std::lock_guard lock(mu_);
      json items = json::array();
      for (auto& [id, s] : sandboxes_) {
        if (s->dialect != "e2b") continue;
        items.push_back({{"sandboxID", s->id}, {"metadata", s->labels}, {"state", "running"}});
      }
      Json(res, 200, items);
    });
    server_->Delete(R"(/sandboxes/([^/]+))",
                    [this](const httplib::Request& req, httplib::Response& res) {
                      if (!Authorized(req, res, true)) return;
                      auto s = Find(req.matches[1]);
                      if (!s || s->dialect != "e2b") return Error(res, 404, "sandbox not found");
                      Delete(req.matches[1]);
                      res.status = 204;
                    });
    server_->Post("/process.Process/Start", [this](const httplib::Request& req,
                                                   httplib::Response& res) {
      auto s = Find(req.get_header_value("E2b-Sandbox-Id"));
      if (!s || s->dialect != "e2b") return Error(res, 502, "sandbox not found");
      if (req.get_header_value("X-Access-Token") != s->token) {
        std::lock_guard lock(mu_);
        ++counts_.auth_failures;
        return Error(res, 401, "bad envd access token");
      }
      if (req.get_header_value("Content-Type") != "application/connect+json")
        return Error(res, 415, "connect streaming needs application/connect+json");
      if (req.body.size() < 5) return Error(res, 400, "no envelope");
      uint32_t n = 0;
      for (int i = 1; i <= 4; ++i) n = (n << 8) | static_cast<uint8_t>(req.body[i]);
      if (req.body.size() != 5 + n) return Error(res, 400, "bad envelope length");
      json msg = json::parse(req.body.substr(5), nullptr, false);
      if (msg.is_discarded() || !msg.contains("process") || !msg["process"].is_object())
        return Error(res, 400, "process is required");
      const json& p = msg["process"];
      const std::string cmd = p.value("cmd", std::string());
      const json args = p.value("args", json::array());
      if (cmd != "/bin/bash" || args.size() != 2 || args[0] != "-c" || !args[1].is_string())
        return Error(res, 400, "the fake runs /bin/bash -c <script> only");
      auto e = Track(*s);
      ProcessResult r = RunIn(*s, "bash", args[1], milliseconds(0), e->stop.get_token(), "");
      Untrack(*s, e);
      std::string out = ConnectEnvelope(0, json{{"event", {{"start", {{"pid", r.pid}}}}}}.dump());
      if (!r.stdout_text.empty()) {
        out += ConnectEnvelope(
            0, json{{"event", {{"data", {{"stdout", Base64Encode(r.stdout_text)}}}}}}.dump());
      }
      json end = {{"exited", true}, {"status", "exit status " + std::to_string(r.exit_code)}};
      // RunProcess reports a SIGKILLed group as 137 (the kill a client sends); envd reports
      // a signal without an exit code. Other codes, 255 too, are exits.
      if (r.exit_code == 128 + SIGKILL) {
        end["status"] = "signal: killed";
      } else {
        end["exitCode"] = r.exit_code;
      }
      out += ConnectEnvelope(0, json{{"event", {{"end", end}}}}.dump());
      out += ConnectEnvelope(2, "{}");
      res.status = 200;
      res.set_content(out, "application/connect+json");
    });

    // Kubernetes API server (agents.x-k8s.io/v1beta1 Sandbox) and the pod runtime.
    const std::string collection =
        R"(/apis/agents\.x-k8s\.io/v1beta1/namespaces/([^/]+)/sandboxes)";
    server_->Post(collection, [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorized(req, res, false)) return;
      json body;
      if (!Body(req, res, body)) return;
      if (body.value("apiVersion", "") != "agents.x-k8s.io/v1beta1" ||
          body.value("kind", "") != "Sandbox" || !body.contains("metadata") ||
          !body.contains("spec") || !body["spec"].contains("podTemplate")) {
        return Json(res, 422,
                    {{"kind", "Status"},
                     {"status", "Failure"},
                     {"message", "not a v1beta1 Sandbox"},
                     {"code", 422}});
      }
      std::lock_guard lock(mu_);
      ++counts_.create_requests;
      const std::string name = body["metadata"].value("generateName", "sandbox-") + RandomHex(3);
      auto s = NewSandbox("kubernetes", name);
      s->k8s_namespace = req.matches[1];
      s->labels = body["metadata"].value("labels", json::object());
      body["metadata"]["name"] = name;
      body["metadata"]["namespace"] = s->k8s_namespace;
      body["metadata"]["uid"] = NewUuidLike();
      s->k8s_object = body;
      Json(res, 201, K8sBody(*s));
    });
    K8sListGetDeleteRoutes(collection, /*claims=*/false);
    // SandboxClaims (the agent-sandbox extensions) on the warm pool.
    const std::string claims =
        R"(/apis/extensions\.agents\.x-k8s\.io/v1beta1/namespaces/([^/]+)/sandboxclaims)";
    server_->Post(claims, [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorized(req, res, false)) return;
      json body;
      if (!Body(req, res, body)) return;
      const json* pool = nullptr;
      if (body.contains("spec") && body["spec"].is_object() &&
          body["spec"].contains("warmPoolRef") && body["spec"]["warmPoolRef"].is_object() &&
          body["spec"]["warmPoolRef"].contains("name")) {
        pool = &body["spec"]["warmPoolRef"]["name"];
      }
      if (body.value("apiVersion", "") != "extensions.agents.x-k8s.io/v1beta1" ||
          body.value("kind", "") != "SandboxClaim" || !body.contains("metadata") ||
          pool == nullptr || !pool->is_string() || pool->get<std::string>().empty()) {
        return Json(res, 422,
                    {{"kind", "Status"},
                     {"status", "Failure"},
                     {"message", "not a v1beta1 SandboxClaim with spec.warmPoolRef.name"},
                     {"code", 422}});
      }
      if (*pool != o_.warm_pool) {
        return Json(
            res, 422,
            {{"kind", "Status"}, {"message", "no SandboxWarmPool " + pool->dump()}, {"code", 422}});
      }
      std::lock_guard lock(mu_);
      ++counts_.create_requests;
      ++counts_.claims;
      auto s = NewSandbox("kubernetes", o_.warm_pool + "-" + RandomHex(3));
      s->k8s_namespace = req.matches[1];
      s->labels = body["metadata"].value("labels", json::object());
      s->claim = body["metadata"].value("generateName", "claim-") + RandomHex(3);
      body["metadata"]["name"] = s->claim;
      body["metadata"]["namespace"] = s->k8s_namespace;
      s->claim_object = body;
      Json(res, 201, ClaimBody(*s));
    });
    K8sListGetDeleteRoutes(claims, /*claims=*/true);
    server_->Post("/execute", [this](const httplib::Request& req, httplib::Response& res) {
      auto s = Find(req.get_header_value("X-Sandbox-ID"));
      if (!s || s->dialect != "kubernetes" ||
          req.get_header_value("X-Sandbox-Namespace") != s->k8s_namespace ||
          req.get_header_value("X-Sandbox-Port") != "8888")
        return Error(res, 502, "no such sandbox behind the router");
      if (Clock::now() < s->ready_at) return Error(res, 503, "sandbox not ready");
      json body;
      if (!Body(req, res, body)) return;
      if (!body.contains("command") || !body["command"].is_string())
        return Error(res, 422, "command is required");
      auto e = Track(*s);
      // The runtime splits the command like a POSIX shell (shlex) and runs it without one.
      ProcessResult r =
          RunIn(*s, "sh", body["command"], milliseconds(300'000), e->stop.get_token(), "");
      Untrack(*s, e);
      Json(res, 200, {{"stdout", r.stdout_text}, {"stderr", ""}, {"exit_code", r.exit_code}});
    });
  }

  // The sandbox a Kubernetes object in namespace `ns` names: a Sandbox by its name, or the one
  // a SandboxClaim holds. Requires mu_.
  std::shared_ptr<Sandbox> K8sObject(bool claim, const std::string& ns, const std::string& name) {
    for (auto& [id, s] : sandboxes_) {
      if (s->dialect == "kubernetes" && s->k8s_namespace == ns &&
          (claim ? s->claim : s->id) == name)
        return s;
    }
    return nullptr;
  }

  // List (labelSelector: a label key every item carries), get and delete of Sandboxes or of
  // SandboxClaims, under `collection` (its first group the namespace). Deleting a claim deletes
  // the sandbox it holds.
  void K8sListGetDeleteRoutes(const std::string& collection, bool claims) {
    const auto body = [this, claims](Sandbox& s) { return claims ? ClaimBody(s) : K8sBody(s); };
    server_->Get(collection, [this, claims, body](const httplib::Request& req,
                                                  httplib::Response& res) {
      if (!Authorized(req, res, false)) return;
      const std::string selector = req.get_param_value("labelSelector");
      std::lock_guard lock(mu_);
      json items = json::array();
      for (auto& [id, s] : sandboxes_) {
        if (s->dialect != "kubernetes" || s->k8s_namespace != req.matches[1].str()) continue;
        if ((claims && s->claim.empty()) || (!selector.empty() && !s->labels.contains(selector)))
          continue;
        items.push_back(body(*s));
      }
      Json(res, 200,
           {{"apiVersion",
             claims ? "extensions.agents.x-k8s.io/v1beta1" : "agents.x-k8s.io/v1beta1"},
            {"kind", claims ? "SandboxClaimList" : "SandboxList"},
            {"items", items}});
    });
    server_->Get(collection + "/([^/]+)",
                 [this, claims, body](const httplib::Request& req, httplib::Response& res) {
                   if (!Authorized(req, res, false)) return;
                   std::lock_guard lock(mu_);
                   auto s = K8sObject(claims, req.matches[1], req.matches[2]);
                   if (!s) return Json(res, 404, {{"kind", "Status"}, {"code", 404}});
                   s->last_used = Clock::now();
                   Json(res, 200, body(*s));
                 });
    server_->Delete(collection + "/([^/]+)",
                    [this, claims](const httplib::Request& req, httplib::Response& res) {
                      if (!Authorized(req, res, false)) return;
                      std::string id;
                      {
                        std::lock_guard lock(mu_);
                        if (auto s = K8sObject(claims, req.matches[1], req.matches[2])) id = s->id;
                      }
                      if (id.empty()) return Json(res, 404, {{"kind", "Status"}, {"code", 404}});
                      Delete(id);
                      Json(res, 200, {{"kind", "Status"}, {"status", "Success"}});
                    });
  }

  std::shared_ptr<Exec> Track(Sandbox& s) {
    auto e = std::make_shared<Exec>();
    std::lock_guard lock(mu_);
    s.execs[RandomHex(8)] = e;
    return e;
  }
  void Untrack(Sandbox& s, const std::shared_ptr<Exec>& e) {
    std::lock_guard lock(mu_);
    for (auto it = s.execs.begin(); it != s.execs.end(); ++it) {
      if (it->second == e) {
        s.execs.erase(it);
        break;
      }
    }
  }

  static std::string NewUuidLike() {
    const std::string h = RandomHex(16);
    return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
           "-" + h.substr(20);
  }

  // Requires mu_.
  json DaytonaBody(Sandbox& s) {
    if (s.state == "starting" && Clock::now() >= s.ready_at) s.state = "started";
    return {{"id", s.id}, {"state", s.state}, {"labels", s.labels}, {"cpu", 1}, {"memory", 5}};
  }
  // Requires mu_.
  json K8sBody(Sandbox& s) {
    json o = s.k8s_object;
    const bool ready = Clock::now() >= s.ready_at;
    json ready_condition = {{"type", "Ready"},
                            {"status", ready ? "True" : "False"},
                            {"reason", ready ? "DependenciesReady" : "NotReady"}};
    o["status"]["serviceFQDN"] = s.id + "." + s.k8s_namespace + ".svc.cluster.local";
    o["status"]["podIPs"] = json::array({"127.0.0.1"});
    o["status"]["conditions"] = json::array({ready_condition});
    return o;
  }

  // Requires mu_.
  json ClaimBody(Sandbox& s) {
    json o = s.claim_object;
    const bool ready = Clock::now() >= s.ready_at;
    o["status"]["conditions"] = json::array({{{"type", "Ready"},
                                              {"status", ready ? "True" : "False"},
                                              {"reason", ready ? "SandboxReady" : "Claiming"}}});
    if (ready) {
      o["status"]["sandbox"] = {{"name", s.id}, {"podIPs", json::array({"127.0.0.1"})}};
    }
    return o;
  }

  SandboxControlPlaneOptions o_;  // api_key guarded by key_mu_; the rest fixed
  std::mutex key_mu_;
  bool jailed_ = false;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Sandbox>> sandboxes_;  // Guarded by mu_.
  std::map<std::string, std::string> idempotency_;             // Guarded by mu_.
  int failures_left_ = 0;                                      // Guarded by mu_ (failures made).
  FakeSandboxCounts counts_;                                   // Guarded by mu_.
  std::atomic<int64_t> exec_ns_{0};
  std::atomic<int> launched_{0};  // Modal exec threads still running
  std::atomic<bool> noop_execs_{false};
  std::atomic<int64_t> noop_hold_us_{0};
  std::jthread reaper_;
};

}  // namespace

std::unique_ptr<SandboxControlPlane> SandboxControlPlane::Start(
    SandboxControlPlaneOptions options) {
  return std::make_unique<ControlPlane>(std::move(options));
}

}  // namespace talaria::test_support
