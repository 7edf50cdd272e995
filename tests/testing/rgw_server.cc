#include "testing/rgw_server.h"

#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <regex>

#include "common/clock.h"
#include "testing/server_process.h"
#include "testing/wait_for.h"

namespace millrace::testing {
namespace {

using std::chrono::seconds;

// The cluster's and the OSD's ids: each cluster lives in its own directory, so fixed ones do.
constexpr char kFsid[] = "5f1c2a9e-0d7b-4c4e-9a51-6f1a1e0c0a01";
constexpr char kOsdUuid[] = "0b3e1f0e-52c4-4d54-8d3a-2f3c1d0e9b11";

constexpr char kHint[] = "apt-get install --no-install-recommends ceph-mon ceph-osd radosgw";

// ceph.conf of a one-node cluster on loopback: no cephx, pools of size 1, an OSD on memstore.
std::string CephConf(const std::string& state, int mon_v2, int mon_v1, int rgw_port) {
  const std::string v2 = std::to_string(mon_v2), v1 = std::to_string(mon_v1);
  return "[global]\n"
         "fsid = " +
         std::string(kFsid) +
         "\n"
         "mon_host = [v2:127.0.0.1:" +
         v2 + ",v1:127.0.0.1:" + v1 +
         "]\n"
         "public_addr = 127.0.0.1\ncluster_addr = 127.0.0.1\npublic_network = 127.0.0.0/8\n"
         "ms_bind_ipv4 = true\nms_bind_ipv6 = false\n"
         "auth_cluster_required = none\nauth_service_required = none\n"
         "auth_client_required = none\n"
         // Daemons default to ms_mon_client_mode = secure, impossible without cephx.
         "ms_mon_client_mode = crc secure\n"
         "keyring = " +
         state +
         "/keyring\n"
         "run_dir = " +
         state +
         "/run\n"
         "admin_socket = " +
         state +
         "/run/$name.asok\n"
         "pid_file = " +
         state +
         "/run/$name.pid\n"
         "log_file = " +
         state +
         "/log/$name.log\n"
         "mon_cluster_log_file = " +
         state +
         "/log/cluster.log\n"
         "log_to_stderr = false\nerr_to_stderr = true\n"
         "osd_pool_default_size = 1\nosd_pool_default_min_size = 1\n"
         "osd_pool_default_pg_num = 8\nosd_pool_default_pgp_num = 8\n"
         "osd_pool_default_pg_autoscale_mode = off\nosd_crush_chooseleaf_type = 0\n"
         "mon_allow_pool_size_one = true\nmon_warn_on_pool_no_redundancy = false\n"
         "mon_max_pg_per_osd = 1000\nmon_data_avail_warn = 1\nmon_data_avail_crit = 0\n"
         "[mon]\nmon_data = " +
         state +
         "/mon/$cluster-$id\nmon_initial_members = a\n"
         "[osd]\nosd_data = " +
         state +
         "/osd/$cluster-$id\nosd_objectstore = memstore\n"
         "memstore_device_bytes = 536870912\n"
         "osd_op_num_shards = 2\nosd_op_num_threads_per_shard = 1\n"
         "[client.rgw.a]\nrgw_data = " +
         state +
         "/rgw\n"
         "rgw_frontends = beast endpoint=127.0.0.1:" +
         std::to_string(rgw_port) +
         "\n"
         "rgw_thread_pool_size = 16\nrgw_dns_name = 127.0.0.1\n";
}

// `text` form-encoded (application/x-www-form-urlencoded, spaces as %20).
std::string FormValue(const std::string& text) {
  return s3::UriEncode(text, /*keep_slash=*/false);
}

}  // namespace

Result<std::unique_ptr<RgwServer>> RgwServer::Start() {
  MR_RETURN_IF_ERROR(RequirePrograms({"/usr/bin/ceph-mon", "/usr/bin/ceph-osd", "/usr/bin/radosgw",
                                      "/usr/bin/radosgw-admin", "/usr/bin/ceph"},
                                     kHint));
  std::unique_ptr<RgwServer> server(new RgwServer());
  const std::string state = server->dir_.path();
  for (const char* sub : {"mon", "osd", "osd/ceph-0", "rgw", "run", "log"}) {
    const std::string path = state + "/" + sub;
    if (::mkdir(path.c_str(), 0755) != 0) return Status::IoError("cannot create " + path);
  }
  MR_ASSIGN_OR_RETURN(const int mon_v2, PickFreePort());
  MR_ASSIGN_OR_RETURN(const int mon_v1, PickFreePort());
  MR_ASSIGN_OR_RETURN(server->rgw_port_, PickFreePort());
  server->conf_ = state + "/ceph.conf";
  MR_RETURN_IF_ERROR(
      WriteFile(server->conf_, CephConf(state, mon_v2, mon_v1, server->rgw_port_), false));
  const std::string& conf = server->conf_;
  const std::string mon_addr =
      "[v2:127.0.0.1:" + std::to_string(mon_v2) + ",v1:127.0.0.1:" + std::to_string(mon_v1) + "]";

  // Each step's command must succeed; a failed one returns its output and the logs.
  auto run = [&](const std::vector<std::string>& argv) -> Status {
    MR_ASSIGN_OR_RETURN(const ProcessResult result, RunProcess(argv, {}, seconds(60)));
    if (result.exit_code == 0) return Status::Ok();
    return Status::Internal(ProcessFailure(argv[0] + " " + argv[1], result) + server->LogTails());
  };
  // ceph-mon --mkfs wants a keyring even with auth none.
  MR_RETURN_IF_ERROR(run({"ceph-authtool", "--create-keyring", state + "/keyring", "--gen-key",
                          "-n", "mon.", "--cap", "mon", "allow *"}));
  MR_RETURN_IF_ERROR(
      run({"monmaptool", "--create", "--fsid", kFsid, "--addv", "a", mon_addr, state + "/monmap"}));
  MR_RETURN_IF_ERROR(run({"ceph-mon", "-c", conf, "--mkfs", "-i", "a", "--monmap",
                          state + "/monmap", "--keyring", state + "/keyring"}));
  MR_RETURN_IF_ERROR(server->Spawn("mon", {"ceph-mon", "-c", conf, "-i", "a", "-f"}));
  if (!WaitFor([&] { return server->Ceph({"mon", "stat"}).ok(); }, seconds(30))) {
    return Status::DeadlineExceeded("the Ceph monitor did not form a quorum" + server->LogTails());
  }

  MR_ASSIGN_OR_RETURN(const std::string osd_id, server->Ceph({"osd", "new", kOsdUuid}));
  if (osd_id != "0") return Status::Internal("unexpected OSD id '" + osd_id + "'");
  MR_RETURN_IF_ERROR(run({"ceph-osd", "-c", conf, "-i", "0", "--mkfs", "--osd-uuid", kOsdUuid}));
  MR_RETURN_IF_ERROR(server->Spawn("osd", {"ceph-osd", "-c", conf, "-i", "0", "-f"}));
  const std::regex osd_up(R"((^|\n)osd\.0 up)");
  if (!WaitFor(
          [&] {
            auto dump = server->Ceph({"osd", "dump"});
            return dump.ok() && std::regex_search(*dump, osd_up);
          },
          seconds(60))) {
    return Status::DeadlineExceeded("the Ceph OSD did not come up" + server->LogTails());
  }

  MR_RETURN_IF_ERROR(server->Spawn("rgw", {"radosgw", "-c", conf, "-n", "client.rgw.a", "-f"}));
  server->endpoint_ = "http://127.0.0.1:" + std::to_string(server->rgw_port_);
  httplib::Client probe(server->endpoint_);
  probe.set_connection_timeout(seconds(1));
  if (!WaitFor([&] { return static_cast<bool>(probe.Get("/")); }, seconds(120))) {
    return Status::DeadlineExceeded("radosgw did not answer on " + server->endpoint_ +
                                    server->LogTails());
  }
  MR_RETURN_IF_ERROR(
      run({"radosgw-admin", "-c", conf, "user", "create", "--uid=test", "--display-name=test",
           std::string("--access-key=") + kAccessKey, std::string("--secret=") + kSecretKey}));
  return server;
}

RgwServer::~RgwServer() {
  for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) {
    int wait_status = 0;
    ::kill(*it, SIGKILL);
    WaitForExit(*it, seconds(10), &wait_status);
  }
}

Status RgwServer::Spawn(const std::string& name, const std::vector<std::string>& argv) {
  const std::string out = dir_.Join("log/" + name + ".stdout");
  MR_ASSIGN_OR_RETURN(const pid_t pid, SpawnProcess(argv, {}, out, out));
  pids_.push_back(pid);
  return Status::Ok();
}

Result<std::string> RgwServer::Ceph(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ceph", "-c", conf_, "--connect-timeout", "10"};
  argv.insert(argv.end(), args.begin(), args.end());
  MR_ASSIGN_OR_RETURN(const ProcessResult result, RunProcess(argv, {}, seconds(30)));
  if (result.exit_code != 0) return Status::Unavailable(ProcessFailure("ceph", result));
  return WithoutTrailingNewline(result.out);
}

std::string RgwServer::LogTails() const {
  std::string tails;
  for (const char* log : {"mon.a.log", "osd.0.log", "client.rgw.a.log", "rgw.stdout"}) {
    tails += "\n--- " + std::string(log) + ":\n" +
             TailSince(dir_.Join(std::string("log/") + log), 0, 10);
  }
  return tails;
}

Result<std::string> RgwServer::Call(const std::string& service, const std::string& method,
                                    const std::string& path, const s3::NameValues& query,
                                    const std::string& body, const std::string& content_type) {
  s3::SignerConfig config;
  config.access_key = kAccessKey;
  config.secret_key = kSecretKey;
  config.service = service;
  config.uri_rule = service == "s3" ? s3::UriRule::kS3 : s3::UriRule::kGeneric;
  const s3::Signer signer(config);
  const std::string host = "127.0.0.1:" + std::to_string(rgw_port_);
  s3::SigningRequest request{.method = method, .path = path, .query = query};
  request.headers = {{"Host", host}};
  if (!content_type.empty()) request.headers.emplace_back("Content-Type", content_type);
  request.payload_hash = s3::Sha256Hex(body);
  signer.SignHeaders(&request, Clock::Real()->WallNow());

  httplib::Headers headers;
  for (const auto& [name, value] : request.headers) {
    if (name != "Host" && name != "Content-Type") headers.emplace(name, value);
  }
  std::string target = s3::WirePath(path);
  if (!query.empty()) target += "?" + s3::CanonicalQuery(query);
  httplib::Client client(endpoint_);
  client.set_read_timeout(seconds(30));
  httplib::Request http;
  http.method = method;
  http.path = target;
  http.headers = headers;
  http.body = body;
  if (!content_type.empty()) http.set_header("Content-Type", content_type);
  const httplib::Result result = client.send(http);
  const std::string what = service + " " + method + " " + target;
  if (!result) return Status::Unavailable(what + ": " + httplib::to_string(result.error()));
  if (result->status / 100 != 2) {
    return Status::Internal(what + " answered " + std::to_string(result->status) + ": " +
                            result->body);
  }
  return result->body;
}

Status RgwServer::CreateBucket(const std::string& bucket) {
  return Call("s3", "PUT", "/" + bucket, {}, "").status();
}

Status RgwServer::PutObject(const std::string& bucket, const std::string& key,
                            const std::string& data) {
  return Call("s3", "PUT", "/" + bucket + "/" + key, {}, data).status();
}

Result<std::string> RgwServer::CreateTopic(const std::string& name, const std::string& push_url) {
  const std::string form =
      "Action=CreateTopic&Name=" + FormValue(name) +
      "&Attributes.entry.1.key=push-endpoint&Attributes.entry.1.value=" + FormValue(push_url);
  MR_ASSIGN_OR_RETURN(const std::string answer,
                      Call("sns", "POST", "/", {}, form, "application/x-www-form-urlencoded"));
  std::smatch match;
  if (!std::regex_search(answer, match, std::regex("<TopicArn>([^<]+)</TopicArn>"))) {
    return Status::Internal("CreateTopic answered without a TopicArn: " + answer);
  }
  return match[1].str();
}

Status RgwServer::NotifyOnCreate(const std::string& bucket, const std::string& topic_arn) {
  const std::string configuration =
      "<NotificationConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<TopicConfiguration><Id>millrace</Id><Topic>" +
      topic_arn +
      "</Topic><Event>s3:ObjectCreated:*</Event></TopicConfiguration>"
      "</NotificationConfiguration>";
  return Call("s3", "PUT", "/" + bucket, {{"notification", ""}}, configuration, "application/xml")
      .status();
}

}  // namespace millrace::testing
