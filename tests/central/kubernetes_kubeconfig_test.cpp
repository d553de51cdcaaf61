// Reaching the API server as kubectl does: kubeconfig (token, token file,
// CA file or data, client certificate data) and the in-cluster service
// account, over real HTTPS with a CA and certificates made by openssl here.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "central/kubernetes/kube_api.h"
#include "tests/central/kubernetes_test_support.h"

namespace ff::sources::k8s {
namespace {

using namespace testing;

std::string b64file(const fs::path& p) {
  return base64_encode(read_file(p));
}

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = std::make_unique<TestPki>(tmp_.path());
    ASSERT_TRUE(pki_->error.empty()) << pki_->error;
  }
  ScratchDirectory tmp_{"k8s"};
  std::unique_ptr<TestPki> pki_;
};

TEST_F(KubeconfigTest, TokenFileAndRelativeCaFileOverHttps) {
  FakeApiServer server(pki_->server_cert, pki_->server_key);
  server.require_token("s3cret-token");
  server.route("/version", R"({"major":"1","minor":"29","gitVersion":"v1.29.4"})");
  fs::create_directories(tmp_ / "kube");
  fs::copy_file(pki_->ca, tmp_ / "kube/ca.pem");
  write_file(tmp_ / "kube/token", "s3cret-token\n");
  write_file(tmp_ / "kube/config", R"(apiVersion: v1
kind: Config
current-context: train
contexts:
- name: train
  context: {cluster: gpu, user: ff, namespace: train}
clusters:
- name: gpu
  cluster:
    server: )" + server.url() + R"(/
    certificate-authority: ca.pem
users:
- name: ff
  user:
    tokenFile: token
)");
  KubeAccess a = load_kubeconfig((tmp_ / "kube/config").string(), "");
  EXPECT_EQ(a.default_namespace, "train");
  EXPECT_EQ(a.cluster_name, "gpu");
  EXPECT_EQ(a.http.ca_file, (tmp_ / "kube/ca.pem").string());
  KubeClient c(a);
  ApiReply r = c.get_json("/version");
  ASSERT_TRUE(r.ok()) << r.detail;
  EXPECT_EQ(r.body["gitVersion"], "v1.29.4");
  EXPECT_EQ(server.seen("/version").at(0).authorization, "Bearer s3cret-token");
}

TEST_F(KubeconfigTest, ClientCertificateDataOverMutualTls) {
  FakeApiServer server(pki_->server_cert, pki_->server_key, pki_->ca);
  server.route("/version", R"({"gitVersion":"v1.30.1"})");
  std::string config = R"(apiVersion: v1
kind: Config
current-context: other
contexts:
- name: other
  context: {cluster: nowhere, user: nobody}
- name: admin@gpu
  context: {cluster: gpu, user: admin}
clusters:
- name: nowhere
  cluster: {server: "https://127.0.0.1:1"}
- name: gpu
  cluster:
    server: )" + server.url() +
                       R"(
    certificate-authority-data: )" +
                       b64file(pki_->ca) + R"(
users:
- name: nobody
  user: {}
- name: admin
  user:
    client-certificate-data: )" +
                       b64file(pki_->client_cert) + R"(
    client-key-data: )" +
                       b64file(pki_->client_key) + "\n";
  write_file(tmp_ / "config", config);
  std::string secrets;
  {
    KubeAccess a = load_kubeconfig((tmp_ / "config").string(), "admin@gpu");
    ASSERT_TRUE(a.secrets_dir);
    secrets = *a.secrets_dir;
    // The decoded key is the user's secret: a private directory, a private file.
    struct stat st {};
    ASSERT_EQ(::stat(secrets.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    ASSERT_EQ(::stat(a.http.client_key_file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(read_file(a.http.client_key_file), read_file(pki_->client_key));
    ApiReply r = KubeClient(a).get_json("/version");
    ASSERT_TRUE(r.ok()) << r.detail;
    EXPECT_EQ(r.body["gitVersion"], "v1.30.1");

    // Without the client certificate the server refuses the handshake.
    KubeAccess no_cert = a;
    no_cert.http.client_cert_file.clear();
    no_cert.http.client_key_file.clear();
    ApiReply refused = KubeClient(no_cert).get_json("/version");
    EXPECT_EQ(refused.status, ApiStatus::kUnreachable) << refused.detail;
  }
  EXPECT_FALSE(fs::exists(secrets)) << "decoded credentials must not outlive the access";
}

TEST_F(KubeconfigTest, WrongCaIsRefusedAndInsecureSkipVerifyIsHonoured) {
  FakeApiServer server(pki_->server_cert, pki_->server_key);
  server.route("/version", R"({"gitVersion":"v1.29.4"})");
  ScratchDirectory other{"k8s"};
  TestPki stranger(other.path());
  ASSERT_TRUE(stranger.error.empty()) << stranger.error;
  KubeAccess a;
  a.server = server.url();
  a.http.ca_file = stranger.ca.string();
  ApiReply r = KubeClient(a).get_json("/version");
  EXPECT_EQ(r.status, ApiStatus::kUnreachable);
  EXPECT_NE(r.detail.find("no reply from " + server.url()), std::string::npos) << r.detail;
  a.http.ca_file.clear();
  a.http.insecure_skip_verify = true;
  EXPECT_TRUE(KubeClient(a).get_json("/version").ok());
}

TEST_F(KubeconfigTest, InClusterServiceAccountOverHttps) {
  FakeApiServer server(pki_->server_cert, pki_->server_key);
  server.require_token("sa-token");
  server.route("/version", R"({"gitVersion":"v1.29.4"})");
  fs::path sa = tmp_ / "serviceaccount";
  write_file(sa / "token", "sa-token");
  fs::copy_file(pki_->ca, sa / "ca.crt");
  write_file(sa / "namespace", "train\n");
  std::string port = server.url().substr(server.url().rfind(':') + 1);
  ::setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", port.c_str(), 1);
  KubeAccess a = resolve_access({"", "", true, sa.string()});
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  EXPECT_EQ(a.server, "https://127.0.0.1:" + port);
  EXPECT_EQ(a.default_namespace, "train");
  ApiReply r = KubeClient(a).get_json("/version");
  ASSERT_TRUE(r.ok()) << r.detail;
  EXPECT_EQ(server.seen("/version").at(0).authorization, "Bearer sa-token");
}

// Each broken kubeconfig names the file and what is missing.
TEST(KubeconfigErrors, NameTheFileAndWhatIsMissing) {
  ScratchDirectory tmp{"k8s"};
  auto error_of = [&](const std::string& yaml, const std::string& context = "") {
    fs::path f = tmp / "config";
    write_file(f, yaml);
    try {
      load_kubeconfig(f.string(), context);
    } catch (const KubeConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string file = (tmp / "config").string();
  const std::string base = R"(
clusters:
- name: c
  cluster: {server: "https://k:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: x
  context: {cluster: c, user: u}
)";
  std::string e = error_of(base);
  EXPECT_NE(e.find(file), std::string::npos) << e;
  EXPECT_NE(e.find("no current-context"), std::string::npos) << e;
  e = error_of(base, "missing");
  EXPECT_NE(e.find("context 'missing' is not in its contexts list"), std::string::npos) << e;
  e = error_of(
      "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
      "clusters:\n- name: c\n  cluster: {certificate-authority: ca.pem}\n");
  EXPECT_NE(e.find("cluster 'c' has no server"), std::string::npos) << e;
  EXPECT_EQ(error_of(base + "current-context: x\n"), "no error");  // the base itself is valid
  e = error_of(R"(current-context: x
contexts:
- name: x
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: "https://k:6443", certificate-authority: missing-ca.pem}
users:
- name: u
  user: {token: t}
)");
  EXPECT_NE(
      e.find("certificate-authority " + (tmp / "missing-ca.pem").string() + " is not readable"),
      std::string::npos)
      << e;
  e = error_of(R"(current-context: x
contexts:
- name: x
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: "https://k:6443"}
users:
- name: u
  user:
    exec: {command: aws, args: [eks, get-token]}
)");
  EXPECT_NE(e.find("user 'u' gets its credentials from an exec plugin"), std::string::npos) << e;
  e = error_of(R"(current-context: x
contexts:
- name: x
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: "https://k:6443", certificate-authority-data: "not*base64"}
)");
  EXPECT_NE(e.find("certificate-authority-data is not valid base64"), std::string::npos) << e;
  e = error_of("current-context: [unclosed\n");
  EXPECT_NE(e.find(file + ":"), std::string::npos) << e;
  try {
    load_kubeconfig((tmp / "absent").string(), "");
    FAIL() << "no error for a missing file";
  } catch (const KubeConfigError& err) {
    EXPECT_NE(std::string(err.what()).find((tmp / "absent").string()), std::string::npos);
  }
}

TEST(KubeconfigErrors, NoKubeconfigAndNotInAPod) {
  ScratchDirectory tmp{"k8s"};
  ::unsetenv("KUBECONFIG");
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  ::setenv("HOME", tmp.path().c_str(), 1);
  try {
    resolve_access({});
    FAIL() << "no error";
  } catch (const KubeConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not running in a pod"), std::string::npos) << e.what();
  }
  try {
    resolve_access({"", "", true, (tmp / "sa").string()});
    FAIL() << "no error";
  } catch (const KubeConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("KUBERNETES_SERVICE_HOST"), std::string::npos);
  }
  ::setenv("HOME", home.c_str(), 1);
}

TEST(Base64, RoundTripAndRejectsGarbage) {
  std::string out;
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    ASSERT_TRUE(base64_decode(base64_encode(s), out));
    EXPECT_EQ(out, s);
  }
  EXPECT_TRUE(base64_decode("aGVs\nbG8=\n", out));
  EXPECT_EQ(out, "hello");
  EXPECT_FALSE(base64_decode("aGVs*G8=", out));
}

}  // namespace
}  // namespace ff::sources::k8s
