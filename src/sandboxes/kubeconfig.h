// Reading a kubeconfig the way kubectl does, for the Kubernetes backend: the files of a
// KUBECONFIG-style list merged (the first file to define a cluster, user or context by name, or
// to set current-context, wins; missing files are skipped), the chosen context's cluster
// (server, certificate authority as a file or inline data) and user (a bearer token, inline or
// from tokenFile, or a client certificate and key, each as a file or inline data), and the
// context's namespace. Relative file names are relative to the kubeconfig that names them.
// Credential plugins (exec, auth-provider), basic auth and insecure-skip-tls-verify are refused
// with a message saying so.
// Thread-safety: pure functions over the file system; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::sandboxes {

struct KubeAccess {
  std::string server;           // the API server's URL
  std::string ca_pem;           // empty: the system's certificate authorities
  std::string token;            // empty: none (a client certificate, or nothing)
  std::string client_cert_pem;  // with client_key_pem, or both empty
  std::string client_key_pem;
  std::string k8s_namespace;  // the context's; empty: it names none
};

// The kubeconfig files to read when none are configured: $KUBECONFIG, else ~/.kube/config
// ($HOME's) when it exists; empty when neither.
std::string DefaultKubeconfigPaths();

// Loads `paths` (':'-separated) and resolves `context` (empty: current-context).
// Errors: NotFound (none of the files exists; a file a field names is missing),
// InvalidArgument (not YAML, a context/cluster/user named but not defined, no current-context,
// no server, bad base64), FailedPrecondition (an authentication kubectl supports and talaria
// does not).
Result<KubeAccess> LoadKubeconfig(std::string_view paths, std::string_view context);

}  // namespace talaria::sandboxes
