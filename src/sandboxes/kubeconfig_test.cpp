// Reading kubeconfigs: contexts, merging a KUBECONFIG list, inline data and files relative to
// their kubeconfig, and the refusals; and the Kubernetes backend using one end to end against
// the fake control plane: over TLS with the kubeconfig's CA and client certificate (the fake
// requires one signed by its CA and checks its CN), and with a token from KUBECONFIG.
#include "sandboxes/kubeconfig.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sandboxes/api_http.h"
#include "support/env_helpers.h"
#include "support/sandbox_control_plane.h"
#include "support/temp_dir.h"
#include "talaria/base/base64.h"
#include "talaria/base/file_io.h"
#include "talaria/base/subprocess.h"
#include "talaria/sandboxes/sandboxes.h"

namespace talaria::sandboxes {
namespace {

class Kubeconfig : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_.path() + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
  }
  test_support::TempDir dir_;
};

constexpr const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443
    certificate-authority: certs/ca.pem
- name: prod-cluster
  cluster:
    server: https://prod.example:6443
    certificate-authority-data: UFJPRCBDQQ==
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: agents}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
users:
- name: dev-user
  user: {token: dev-token}
- name: prod-user
  user:
    client-certificate-data: Q0VSVA==
    client-key: keys/prod.key
)";

TEST_F(Kubeconfig, TheCurrentContextOrTheNamedOneGivesServerCaUserAndNamespace) {
  const std::string path = Write("sub/config", kTwoContexts);
  Write("sub/certs/ca.pem", "DEV CA");
  Write("sub/keys/prod.key", "KEY");
  auto dev = LoadKubeconfig(path, "");
  ASSERT_TRUE(dev) << dev.error().ToString();
  EXPECT_EQ(dev->server, "https://dev.example:6443");
  EXPECT_EQ(dev->ca_pem, "DEV CA");  // relative to the kubeconfig's directory
  EXPECT_EQ(dev->token, "dev-token");
  EXPECT_EQ(dev->client_cert_pem, "");
  EXPECT_EQ(dev->k8s_namespace, "agents");
  auto prod = LoadKubeconfig(path, "prod");
  ASSERT_TRUE(prod) << prod.error().ToString();
  EXPECT_EQ(prod->server, "https://prod.example:6443");
  EXPECT_EQ(prod->ca_pem, "PROD CA");  // inline, base64
  EXPECT_EQ(prod->token, "");
  EXPECT_EQ(prod->client_cert_pem, "CERT");
  EXPECT_EQ(prod->client_key_pem, "KEY");
  EXPECT_EQ(prod->k8s_namespace, "");
}

TEST_F(Kubeconfig, AListMergesWithTheFirstFileWinningAndMissingFilesSkipped) {
  const std::string first = Write("a", R"(current-context: mine
users:
- name: shared-user
  user: {tokenFile: token.txt}
contexts:
- name: mine
  context: {cluster: shared, user: shared-user}
)");
  Write("token.txt", "from-file\n");
  const std::string second = Write("b", R"(current-context: theirs
clusters:
- name: shared
  cluster: {server: 'http://127.0.0.1:1'}
users:
- name: shared-user
  user: {token: ignored}
)");
  auto access = LoadKubeconfig(dir_.path() + "/missing:" + first + ":" + second, "");
  ASSERT_TRUE(access) << access.error().ToString();
  EXPECT_EQ(access->server, "http://127.0.0.1:1");
  EXPECT_EQ(access->token, "from-file");
  // KUBECONFIG is the list read when none is configured.
  ::setenv("KUBECONFIG", (first + ":" + second).c_str(), 1);
  EXPECT_EQ(DefaultKubeconfigPaths(), first + ":" + second);
  ::unsetenv("KUBECONFIG");
}

TEST_F(Kubeconfig, WhatCannotBeUsedIsRefusedAndSaysWhy) {
  EXPECT_EQ(LoadKubeconfig(dir_.path() + "/none", "").error().code(), StatusCode::kNotFound);
  const std::string path = Write("config", kTwoContexts);
  auto unknown = LoadKubeconfig(path, "staging");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.error().message().find("'staging'"), std::string::npos);
  // certs/ca.pem is not there.
  EXPECT_EQ(LoadKubeconfig(path, "dev").error().code(), StatusCode::kNotFound);
  auto plugin = LoadKubeconfig(Write("exec", R"(current-context: c
clusters: [{name: k, cluster: {server: 'https://k'}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: {command: aws}}}]
)"),
                               "");
  ASSERT_FALSE(plugin);
  EXPECT_EQ(plugin.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(plugin.error().message().find("exec"), std::string::npos);
  auto insecure = LoadKubeconfig(Write("insecure", R"(current-context: c
clusters: [{name: k, cluster: {server: 'https://k', insecure-skip-tls-verify: true}}]
contexts: [{name: c, context: {cluster: k}}]
)"),
                                 "");
  EXPECT_EQ(insecure.error().code(), StatusCode::kFailedPrecondition);
  auto half = LoadKubeconfig(Write("half", R"(current-context: c
clusters: [{name: k, cluster: {server: 'https://k'}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {client-certificate-data: Q0VSVA==}}]
)"),
                             "");
  EXPECT_EQ(half.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadKubeconfig(Write("bad", "{: ["), "").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadKubeconfig(Write("nocurrent", "clusters: []\n"), "").error().code(),
            StatusCode::kInvalidArgument);
}

// A CA, a server certificate for 127.0.0.1 and a client certificate (CN talaria-client), both
// signed by it, in `dir` (ca.pem, server.pem/.key, client.pem/.key).
bool MakeKubeTestPki(const std::string& dir) {
  const auto run = [&](std::vector<std::string> argv) {
    SpawnOptions o;
    o.argv = std::move(argv);
    o.cwd = dir;
    o.timeout = std::chrono::seconds(60);
    auto r = RunProcess(o);
    return r && r->exit_code == 0;
  };
  return run({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
              "-out", "ca.pem", "-days", "2", "-subj", "/CN=talaria-test-ca"}) &&
         run({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
              "server.csr", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"}) &&
         run({"openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
              "-CAcreateserial", "-out", "server.pem", "-days", "2", "-copy_extensions", "copy"}) &&
         run({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key", "-out",
              "client.csr", "-subj", "/CN=talaria-client"}) &&
         run({"openssl", "x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
              "-CAcreateserial", "-out", "client.pem", "-days", "2"});
}

class KubeconfigBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = test_support::MakeScratchOutsideTmp(TALARIA_BINARY_DIR, "talaria-kube");
    ASSERT_FALSE(scratch_.empty());
    std::filesystem::create_directories(scratch_ + "/ws");
  }
  void TearDown() override {
    env_.reset();
    plane_.reset();
    ::unsetenv("KUBECONFIG");
    std::error_code ec;
    std::filesystem::remove_all(scratch_, ec);
  }
  void StartPlane(test_support::SandboxControlPlaneOptions fake) {
    fake.root = scratch_;
    fake.workspace = scratch_ + "/ws";
    plane_ = test_support::SandboxControlPlane::Start(std::move(fake));
  }
  // Kubernetes through the kubeconfig only: no URL, key or CA in the options.
  Result<std::shared_ptr<env::Environment>> Open(const std::string& kubeconfig) {
    SandboxServiceOptions o;
    o.kind = "kubernetes";
    o.kubeconfig = kubeconfig;
    o.data_plane_url = plane_->url();  // the router, on the same server
    o.initial_cwd = scratch_ + "/ws";
    o.request_timeout = std::chrono::seconds(30);
    return OpenSandboxService(o);
  }

  std::string scratch_;
  std::unique_ptr<test_support::SandboxControlPlane> plane_;
  std::shared_ptr<env::Environment> env_;
};

TEST_F(KubeconfigBackend, TheKubeconfigsCaAndClientCertificateReachTheApiServer) {
  const std::string pki = scratch_ + "/pki";
  std::filesystem::create_directories(pki);
  if (!MakeKubeTestPki(pki)) GTEST_SKIP() << "openssl cannot make test certificates here";
  test_support::SandboxControlPlaneOptions fake;
  fake.tls_cert_file = pki + "/server.pem";
  fake.tls_key_file = pki + "/server.key";
  fake.client_ca_file = pki + "/ca.pem";
  StartPlane(fake);
  const std::string config = scratch_ + "/kube/config";
  std::filesystem::create_directories(scratch_ + "/kube");
  std::ofstream(config) << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                        << "clusters:\n- name: fake\n  cluster:\n    server: " << plane_->url()
                        << "\n    certificate-authority-data: "
                        << Base64Encode(*ReadWholeFile(pki + "/ca.pem"))
                        << "\ncontexts:\n- name: test\n  context: {cluster: fake, user: me, "
                        << "namespace: agents}\nusers:\n- name: me\n  user:\n"
                        << "    client-certificate: ../pki/client.pem\n"
                        << "    client-key-data: "
                        << Base64Encode(*ReadWholeFile(pki + "/client.key")) << "\n";
  auto env = Open(config);
  ASSERT_TRUE(env) << env.error().ToString();
  env_ = std::move(*env);
  auto r = env_->Run("echo over-tls", {});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->output, "over-tls\n");
  EXPECT_GT(plane_->counts().client_cert_auths, 0);
  EXPECT_EQ(plane_->counts().auth_failures, 0);
  EXPECT_EQ(plane_->live_namespaces(), std::vector<std::string>{"agents"});
  env_.reset();
  EXPECT_EQ(plane_->counts().live, 0);
  // Without the client certificate the server refuses the handshake.
  std::ofstream(config) << "current-context: test\nclusters:\n- name: fake\n  cluster:\n"
                        << "    server: " << plane_->url() << "\n    certificate-authority: " << pki
                        << "/ca.pem\ncontexts:\n- name: test\n  context: {cluster: "
                        << "fake, user: me}\nusers:\n- name: me\n  user: {token: test-key}\n";
  auto refused = Open(config);
  ASSERT_FALSE(refused);
  EXPECT_EQ(plane_->counts().live, 0);
}

TEST_F(KubeconfigBackend, ATokenUserFromTheKubeconfigVariable) {
  StartPlane({});
  const std::string config = scratch_ + "/config";
  std::ofstream(config) << "current-context: test\nclusters:\n- name: fake\n  cluster: {server: '"
                        << plane_->url() << "'}\ncontexts:\n- name: test\n  context: {cluster: "
                        << "fake, user: me}\nusers:\n- name: me\n  user: {token: test-key}\n";
  ::setenv("KUBECONFIG", (scratch_ + "/missing:" + config).c_str(), 1);
  auto env = Open("");
  ASSERT_TRUE(env) << env.error().ToString();
  env_ = std::move(*env);
  auto r = env_->Run("echo with-token", {});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->output, "with-token\n");
  EXPECT_EQ(plane_->live_namespaces(), std::vector<std::string>{"default"});
  EXPECT_EQ(plane_->counts().auth_failures, 0);
  // A wrong token in it is refused with the server's status.
  std::ofstream(config) << "current-context: test\nclusters:\n- name: fake\n  cluster: {server: '"
                        << plane_->url() << "'}\ncontexts:\n- name: test\n  context: {cluster: "
                        << "fake, user: me}\nusers:\n- name: me\n  user: {token: wrong}\n";
  auto refused = Open("");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kPermissionDenied) << refused.error().ToString();
}

}  // namespace
}  // namespace talaria::sandboxes
