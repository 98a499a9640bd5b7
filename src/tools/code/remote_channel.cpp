#include "tools/code/remote_channel.h"

#include <nlohmann/json.hpp>

#include "talaria/base/shell_words.h"

namespace talaria::tools::code {
namespace {

constexpr std::string_view kMarker = "\x1eTALARIA ";

// The remote side. Descriptor 3 is held by /dev/null from the start so that nothing else (the
// channel's copy, the socketpair, the pipes) takes the number the interpreter's socket needs.
constexpr std::string_view kRelay =
    R"py(import codecs, fcntl, json, os, queue, shutil, signal, socket, subprocess, sys, tempfile, threading
MARK = b"\x1eTALARIA "
os.dup2(os.open(os.devnull, os.O_RDWR), 3)
chan = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 10)
os.dup2(3, 1)
lock = threading.Lock()
def send(obj):
    data = MARK + json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    with lock:
        view = memoryview(data)
        while view:
            view = view[os.write(chan, view):]
def receive():
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
bundle = receive()
if bundle is None:
    os._exit(1)
work = tempfile.mkdtemp(prefix="talaria-exec-")
for name, text in bundle["files"].items():
    with open(os.path.join(work, os.path.basename(name)), "w", encoding="utf-8") as f:
        f.write(text)
ours, theirs = socket.socketpair()
os.dup2(theirs.fileno(), 3)
theirs.close()
out_r, out_w = os.pipe()
err_r, err_w = os.pipe()
env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb",
       "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1", "TALARIA_RPC_FD": "3",
       "HOME": work, "TMPDIR": work}
try:
    child = subprocess.Popen([sys.executable, "-I", "-S", "-c", bundle["program"], os.path.join(work, "script.py"), work],
                             cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w,
                             pass_fds=(3,), start_new_session=True)
except OSError as e:
    send({"stderr": "cannot start the interpreter: %s\n" % e})
    send({"exit": 127})
    shutil.rmtree(work, True)
    os._exit(0)
os.close(out_w)
os.close(err_w)
os.close(3)
def end(code):
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except OSError:
        pass
    shutil.rmtree(work, True)
    os._exit(code)
def pump(fd, key):
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode
    while True:
        chunk = os.read(fd, 65536)
        text = decode(chunk, not chunk)
        if text:
            send({key: text})
        if not chunk:
            return
def rpc_out():
    buf = b""
    while True:
        data = ours.recv(65536)
        if not data:
            return
        buf += data
        while len(buf) >= 4 and len(buf) >= 4 + int.from_bytes(buf[:4], "big"):
            n = int.from_bytes(buf[:4], "big")
            send({"rpc": buf[4:4 + n].decode("utf-8", "replace")})
            buf = buf[4 + n:]
answers = queue.Queue()
def host_in():
    # Never blocks on the interpreter's socket, so the end of the channel is always seen.
    try:
        while True:
            message = receive()
            if message is None:
                break
            if "rpc" in message:
                answers.put(message["rpc"].encode())
    finally:
        end(1)
def rpc_in():
    while True:
        payload = answers.get()
        try:
            ours.sendall(len(payload).to_bytes(4, "big") + payload)
        except OSError:
            pass
pumps = [threading.Thread(target=pump, args=(out_r, "stdout"), daemon=True),
         threading.Thread(target=pump, args=(err_r, "stderr"), daemon=True)]
for t in pumps + [threading.Thread(target=rpc_out, daemon=True), threading.Thread(target=host_in, daemon=True),
                  threading.Thread(target=rpc_in, daemon=True)]:
    t.start()
code = child.wait()
try:
    os.killpg(child.pid, signal.SIGKILL)
except OSError:
    pass
for t in pumps:
    t.join(30)
send({"exit": code if code >= 0 else 128 - code})
end(0)
)py";

}  // namespace

std::string RemoteRelayCommand(const std::string& python) {
  std::string command = ShellQuote(python);
  command += " -I -S -c ";
  command += ShellQuote(kRelay);
  command += " 2>&1";
  return command;
}

std::string EncodeChannelLine(const Json& message) {
  std::string line(kMarker);
  line += DumpJson(message);
  line += '\n';
  return line;
}

std::optional<ChannelLineReader::Item> ChannelLineReader::Next() {
  const size_t newline = buffer_.find('\n', offset_);
  if (newline == std::string::npos) {
    if (offset_ > 0) {  // keep the buffer from growing by what was consumed
      buffer_.erase(0, offset_);
      offset_ = 0;
    }
    return std::nullopt;
  }
  const std::string_view line(buffer_.data() + offset_, newline - offset_);
  offset_ = newline + 1;
  Item item;
  if (line.starts_with(kMarker)) {
    auto parsed = ParseJson(line.substr(kMarker.size()));
    if (parsed && parsed->is_object()) {
      item.message = std::move(*parsed);
      return item;
    }
  }
  item.noise = std::string(line);
  return item;
}

std::string ChannelLineReader::Rest() {
  std::string rest = buffer_.substr(offset_);
  buffer_.clear();
  offset_ = 0;
  return rest;
}

}  // namespace talaria::tools::code
