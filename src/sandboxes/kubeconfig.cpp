#include "sandboxes/kubeconfig.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sandboxes/api_http.h"
#include "talaria/base/base64.h"
#include "talaria/base/file_io.h"

namespace talaria::sandboxes {
namespace {

// A named entry (cluster, user, context) with the directory of the file that defined it, which
// its relative file names are relative to.
struct Entry {
  YAML::Node body;
  std::string dir;
};

struct Merged {
  std::map<std::string, Entry> clusters;
  std::map<std::string, Entry> users;
  std::map<std::string, Entry> contexts;
  std::string current_context;
};

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// `list` (a sequence of {name, <field>: {...}}) into `into`, keeping names already there.
void MergeNamed(const YAML::Node& list, const char* field, const std::string& dir,
                std::map<std::string, Entry>& into) {
  if (!list || !list.IsSequence()) return;
  for (const YAML::Node& item : list) {
    if (!item.IsMap() || !item["name"] || !item["name"].IsScalar()) continue;
    into.try_emplace(item["name"].as<std::string>(), Entry{item[field], dir});
  }
}

std::string Scalar(const YAML::Node& map, const char* key) {
  if (!map || !map.IsMap()) return "";
  const YAML::Node v = map[key];
  return v && v.IsScalar() ? v.as<std::string>() : "";
}

// A PEM from `<key>-data` (base64) or the file `<key>` names; empty when neither is set.
Result<std::string> PemOf(const Entry& entry, const std::string& key, const std::string& what) {
  const std::string data = Scalar(entry.body, (key + "-data").c_str());
  if (!data.empty()) {
    auto decoded = Base64Decode(data);  // skips the line breaks PEM data may carry
    if (!decoded || decoded->empty()) {
      return Err(InvalidArgumentError("kubeconfig: " + what + " " + key + "-data is not base64"));
    }
    return *decoded;
  }
  std::string file = Scalar(entry.body, key.c_str());
  if (file.empty()) return std::string();
  if (file.front() != '/') file = entry.dir + "/" + file;
  auto text = ReadWholeFile(file);
  if (!text)
    return Err(NotFoundError("kubeconfig: " + what + " " + key + " " + file + ": " +
                             text.error().message()));
  return *text;
}

Result<const Entry*> Find(const std::map<std::string, Entry>& in, const std::string& name,
                          const char* kind) {
  auto it = in.find(name);
  if (it == in.end() || !it->second.body || !it->second.body.IsMap()) {
    return Err(InvalidArgumentError("kubeconfig: " + std::string(kind) + " '" + name +
                                    "' is not defined"));
  }
  return &it->second;
}

}  // namespace

std::string DefaultKubeconfigPaths() {
  const char* env = std::getenv("KUBECONFIG");
  if (env != nullptr && *env != '\0') return env;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return "";
  const std::string path = std::string(home) + "/.kube/config";
  return ::access(path.c_str(), R_OK) == 0 ? path : "";
}

Result<KubeAccess> LoadKubeconfig(std::string_view paths, std::string_view context) {
  Merged merged;
  int read = 0;
  for (size_t start = 0; start <= paths.size();) {
    size_t end = paths.find(':', start);
    if (end == std::string_view::npos) end = paths.size();
    const std::string path(paths.substr(start, end - start));
    start = end + 1;
    if (path.empty()) continue;
    auto text = ReadWholeFile(path);
    if (!text) continue;  // kubectl skips the files of the list that do not exist
    ++read;
    YAML::Node doc;
    try {
      doc = YAML::Load(*text);
    } catch (const YAML::Exception& e) {
      return Err(InvalidArgumentError("kubeconfig " + path + ": " + e.what()));
    }
    if (doc.IsNull()) continue;
    if (!doc.IsMap()) return Err(InvalidArgumentError("kubeconfig " + path + ": not a mapping"));
    const std::string dir = DirOf(path);
    MergeNamed(doc["clusters"], "cluster", dir, merged.clusters);
    MergeNamed(doc["users"], "user", dir, merged.users);
    MergeNamed(doc["contexts"], "context", dir, merged.contexts);
    if (merged.current_context.empty()) merged.current_context = Scalar(doc, "current-context");
  }
  if (read == 0) {
    return Err(NotFoundError("kubeconfig: none of '" + std::string(paths) + "' can be read"));
  }
  const std::string name = context.empty() ? merged.current_context : std::string(context);
  if (name.empty()) return Err(InvalidArgumentError("kubeconfig: no current-context is set"));
  const Entry* ctx = TALARIA_TRY(Find(merged.contexts, name, "context"));
  const Entry* cluster =
      TALARIA_TRY(Find(merged.clusters, Scalar(ctx->body, "cluster"), "cluster"));
  KubeAccess access;
  access.k8s_namespace = Scalar(ctx->body, "namespace");
  access.server = Scalar(cluster->body, "server");
  if (access.server.empty()) {
    return Err(InvalidArgumentError("kubeconfig: cluster '" + Scalar(ctx->body, "cluster") +
                                    "' has no server"));
  }
  if (Scalar(cluster->body, "insecure-skip-tls-verify") == "true") {
    return Err(FailedPreconditionError(
        "kubeconfig: insecure-skip-tls-verify is not supported: give the cluster's "
        "certificate-authority"));
  }
  access.ca_pem = TALARIA_TRY(PemOf(*cluster, "certificate-authority", "cluster"));
  const std::string user_name = Scalar(ctx->body, "user");
  if (user_name.empty()) return access;  // anonymous
  const Entry* user = TALARIA_TRY(Find(merged.users, user_name, "user"));
  for (const char* unsupported : {"exec", "auth-provider", "username", "password"}) {
    if (user->body[unsupported]) {
      return Err(FailedPreconditionError("kubeconfig: user '" + user_name + "' authenticates by " +
                                         unsupported +
                                         ", which talaria does not support: give a token "
                                         "or a client certificate"));
    }
  }
  access.token = Scalar(user->body, "token");
  if (access.token.empty()) {
    std::string file = Scalar(user->body, "tokenFile");
    if (!file.empty()) {
      if (file.front() != '/') file = user->dir + "/" + file;
      auto token = ReadWholeFile(file);
      if (!token) return Err(NotFoundError("kubeconfig: tokenFile " + file));
      access.token = *token;
      while (!access.token.empty() && (access.token.back() == '\n' || access.token.back() == '\r' ||
                                       access.token.back() == ' '))
        access.token.pop_back();
    }
  }
  access.client_cert_pem = TALARIA_TRY(PemOf(*user, "client-certificate", "user"));
  access.client_key_pem = TALARIA_TRY(PemOf(*user, "client-key", "user"));
  if (access.client_cert_pem.empty() != access.client_key_pem.empty()) {
    return Err(InvalidArgumentError("kubeconfig: user '" + user_name +
                                    "' has a client certificate without its key, or a key "
                                    "without its certificate"));
  }
  return access;
}

}  // namespace talaria::sandboxes
