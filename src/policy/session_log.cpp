// SPDX-License-Identifier: Apache-2.0
// The session log: JSONL, a header line, then events. See policy_service.h for the
// format.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <system_error>

#include "base/io.h"
#include "base/text.h"
#include "base/unique_fd.h"
#include "dsh/sandbox/errors.h"
#include "dsh/sandbox/policy_service.h"
#include "seam/json_codec.h"
#include "seam/trusted_file.h"

namespace dsh::sandbox {

namespace {

using Json = nlohmann::json;

struct SessionHeader {
  std::string id;
  std::optional<std::string> cwd;
};

struct SessionContents {
  SessionHeader header;
  std::vector<SandboxModeEvent> events;
  std::vector<std::string> workspaces;  // of the workspace-write runs recorded
};

// An audit trail grows with every run; a log past this size is not read whole.
constexpr std::size_t kMaxSessionLogBytes = std::size_t{64} * 1024 * 1024;

std::string untrusted_problem(const std::string& reason) {
  return fmt::format(
      "cannot be trusted: {}; a confined run could have rewritten it (its mode, its cwd) to "
      "change later runs. Keep the session log outside the workspace, /tmp and $TMPDIR, in "
      "directories owned by you or root that nobody else can write",
      reason);
}

[[noreturn]] void throw_invalid(const std::string& path, const std::string& problem) {
  throw InvalidSandboxInputError(fmt::format("session log {}: {}", text::quoted(path), problem));
}

[[noreturn]] void throw_line(const std::string& path, std::size_t line,
                             const std::string& problem) {
  throw InvalidSandboxInputError(
      fmt::format("session log {} line {}: {}", text::quoted(path), line, problem));
}

bool has_nul(std::string_view value) { return value.find('\0') != std::string_view::npos; }

// Shared by create() and the reader, so a file can only hold what create() would write.
Result<void> validate_header(const SessionHeader& header) {
  if (header.id.empty() || has_nul(header.id)) {
    return InvalidInput{
        fmt::format("session id {} is invalid; pass a non-empty id without NUL bytes",
                    text::quoted(header.id))};
  }
  if (!header.cwd) return {};
  if (has_nul(*header.cwd)) {
    return InvalidInput{fmt::format("session cwd {} contains a NUL byte; a path cannot contain NUL",
                                    text::quoted(*header.cwd))};
  }
  if (!header.cwd->starts_with('/')) {
    // A relative cwd would name a different directory in every process that reads the log.
    return InvalidInput{
        fmt::format("session cwd {} is not an absolute path; record the absolute directory the "
                    "session works in",
                    text::quoted(*header.cwd))};
  }
  return {};
}

Result<std::string> optional_string(const Json& object, std::string_view field) {
  const auto it = object.find(field);
  if (it == object.end()) return std::string();
  if (!it->is_string()) return InvalidInput{fmt::format("field \"{}\" must be a string", field)};
  return it->get<std::string>();
}

Result<SessionHeader> header_from_value(const Json& value) {
  if (value.value("type", Json()) != std::string(kSessionHeaderType)) {
    return InvalidInput{
        R"(the first line must be the session header {"type":"session","version":1,...})"};
  }
  if (value.value("version", Json()) != kSessionLogVersion) {
    return InvalidInput{
        fmt::format("unsupported session log version {}; this build reads version {}",
                    value.value("version", Json()).dump(), kSessionLogVersion)};
  }
  const auto id = value.find("id");
  if (id == value.end() || !id->is_string()) {
    return InvalidInput{"the session header needs a string \"id\""};
  }
  SessionHeader header{id->get<std::string>(), std::nullopt};
  if (value.contains("cwd")) {
    auto cwd = optional_string(value, "cwd");
    if (!cwd) return cwd.error();
    header.cwd = std::move(cwd).value();
  }
  if (auto valid = validate_header(header); !valid) return valid.error();
  return header;
}

// The reference's invariant companion: an unknown mode is rejected, never guessed.
Result<SandboxModeEvent> sandbox_mode_event_from_value(const Json& event) {
  const auto payload = event.find("payload");
  if (payload == event.end() || !payload->is_object()) {
    return InvalidInput{R"(sandbox/mode needs an object "payload" {"mode":...})"};
  }
  const Json mode_value = payload->value("mode", Json());
  const auto unknown =
      InvalidInput{fmt::format("sandbox/mode carries unknown mode {}",
                               mode_value.dump(-1, ' ', false, Json::error_handler_t::replace))};
  if (!mode_value.is_string()) return unknown;
  auto mode = parse_sandbox_mode(mode_value.get<std::string>());
  if (!mode) return unknown;
  SandboxModeEvent parsed{mode.value(), false};
  if (payload->contains("source")) {
    const Json& source = payload->at("source");
    if (source != std::string(kDelegationSource)) {
      return InvalidInput{
          fmt::format("sandbox/mode carries unknown source {}; the only source is \"delegation\"",
                      source.dump(-1, ' ', false, Json::error_handler_t::replace))};
    }
    parsed.delegated = true;
  }
  return parsed;
}

Result<Json> parse_line(std::string_view line) {
  auto value = json::parse(line, "session log line");
  if (!value) return value.error();
  if (!value.value().is_object() || !value.value().contains("type") ||
      !value.value().at("type").is_string()) {
    return InvalidInput{"each line must be a JSON object with a string \"type\""};
  }
  return value;
}

SessionContents parse_contents(const std::string& path, std::string_view text) {
  if (text.empty()) throw_invalid(path, "the file is empty; it has no session header");
  SessionContents contents;
  std::size_t number = 0;
  for (std::size_t start = 0; start < text.size();) {
    ++number;
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      // A later append would glue its line onto this one; refuse rather than misread.
      throw_line(path, number, "the line is not terminated by a newline (a torn write?)");
    }
    auto value = parse_line(text.substr(start, end - start));
    if (!value) throw_line(path, number, value.error().message);
    start = end + 1;
    if (number == 1) {
      auto header = header_from_value(value.value());
      if (!header) throw_line(path, number, header.error().message);
      contents.header = std::move(header).value();
      continue;
    }
    const std::string type = value.value().at("type").get<std::string>();
    if (type == kSessionHeaderType) throw_line(path, number, "a second session header");
    if (type == kSandboxRunEventType) {
      const Json& payload = value.value().value("payload", Json());
      const Json mode = payload.is_object() ? payload.value("mode", Json()) : Json();
      const Json workspace = payload.is_object() ? payload.value("workspace", Json()) : Json();
      if (!mode.is_string() || !workspace.is_string()) {
        throw_line(path, number,
                   R"(sandbox/run needs a payload with string "mode" and "workspace")");
      }
      if (mode == std::string(wire_name(SandboxMode::kWorkspaceWrite))) {
        contents.workspaces.push_back(workspace.get<std::string>());
      }
      continue;
    }
    if (type != kSandboxModeEventType) continue;  // another component's event
    auto event = sandbox_mode_event_from_value(value.value());
    if (!event) throw_line(path, number, event.error().message);
    contents.events.push_back(event.value());
  }
  return contents;
}

std::string read_file(const std::string& path, const SessionLogOptions& options) {
  if (has_nul(path)) throw_invalid(path, "the path contains a NUL byte");
  if (options.untrusted_roots) {
    auto file = open_trusted_path(path, *options.untrusted_roots, TrustedKind::kFile, true);
    if (!file) throw_invalid(path, untrusted_problem(file.error().message));
    auto text = read_trusted_file(file.value(), kMaxSessionLogBytes);
    if (!text) throw_invalid(path, text.error().message);
    return std::move(text).value();
  }
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    throw_invalid(path, fmt::format("cannot open: {}", std::generic_category().message(error)));
  }
  std::string text;
  if (const int error = io::read_all(fd.get(), text).error; error != 0) {
    throw_invalid(path, fmt::format("cannot read: {}", std::generic_category().message(error)));
  }
  return text;
}

SessionContents read_contents(const std::string& path, const SessionLogOptions& options) {
  return parse_contents(path, read_file(path, options));
}

// One write(2) per line: with O_APPEND the kernel places the whole line at the end of the file,
// so concurrent writers never interleave within a line.
void write_line(int fd, const std::string& path, const std::string& line, bool sync) {
  ssize_t written = -1;
  do {
    written = ::write(fd, line.data(), line.size());
  } while (written < 0 && errno == EINTR);
  if (written < 0) {
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("cannot append to session log {}", text::quoted(path)));
  }
  if (static_cast<std::size_t>(written) != line.size()) {
    throw std::system_error(std::make_error_code(std::errc::no_space_on_device),
                            fmt::format("short write to session log {}", text::quoted(path)));
  }
  if (sync && ::fsync(fd) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("cannot fsync session log {}", text::quoted(path)));
  }
}

std::string dump_line(const Json& value) {
  // The header was validated and events carry only wire names; a path that is not UTF-8 is
  // the one thing JSON cannot carry, and dump reports it as invalid input.
  std::string line = json::dump(value).value();
  line += '\n';
  return line;
}

}  // namespace

std::optional<SandboxMode> effective_sandbox_mode(const std::vector<SandboxModeEvent>& events) {
  if (events.empty()) return std::nullopt;
  return events.back().mode;
}

SessionLog::SessionLog(std::string path, std::string id, std::optional<std::string> cwd,
                       SessionLogOptions options)
    : path_(std::move(path)),
      id_(std::move(id)),
      cwd_(std::move(cwd)),
      options_(std::move(options)) {}

SessionLog SessionLog::create(std::string path, std::string id, std::optional<std::string> cwd,
                              SessionLogOptions options) {
  if (path.empty() || has_nul(path)) throw_invalid(path, "the path is empty or contains NUL");
  SessionHeader header{std::move(id), std::move(cwd)};
  validate_header(header).value();
  Json value{{"type", kSessionHeaderType}, {"version", kSessionLogVersion}, {"id", header.id}};
  if (header.cwd) value["cwd"] = *header.cwd;
  const std::string line = dump_line(value);
  if (options.untrusted_roots) {
    const std::size_t slash = path.rfind('/');
    const std::string parent =
        slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    auto dir = check_trusted_path(parent, *options.untrusted_roots, TrustedKind::kDirectory);
    if (!dir) throw_invalid(path, untrusted_problem(dir.error().message));
  }
  const UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    const int error = errno;
    throw_invalid(path, fmt::format("cannot create: {}", std::generic_category().message(error)));
  }
  write_line(fd.get(), path, line, options.fsync);
  return {std::move(path), std::move(header.id), std::move(header.cwd), std::move(options)};
}

SessionLog SessionLog::open(std::string path, SessionLogOptions options) {
  SessionContents contents = read_contents(path, options);
  return {std::move(path), std::move(contents.header.id), std::move(contents.header.cwd),
          std::move(options)};
}

std::vector<SandboxModeEvent> SessionLog::sandbox_mode_events() const {
  SessionContents contents = read_contents(path_, options_);
  // The header is immutable; a file replaced under us is another session, not this one.
  if (contents.header.id != id_ || contents.header.cwd != cwd_) {
    throw_line(path_, 1, fmt::format("the header no longer names session {}", text::quoted(id_)));
  }
  return std::move(contents.events);
}

std::vector<std::string> SessionLog::written_workspaces() const {
  SessionContents contents = read_contents(path_, options_);
  std::vector<std::string> workspaces;
  if (cwd_) workspaces.push_back(*cwd_);
  for (std::string& workspace : contents.workspaces) {
    if (std::find(workspaces.begin(), workspaces.end(), workspace) == workspaces.end()) {
      workspaces.push_back(std::move(workspace));
    }
  }
  return workspaces;
}

void SessionLog::append_line(const std::string& line) const {
  std::string path = path_;
  struct stat checked {};
  if (options_.untrusted_roots) {
    auto file = open_trusted_path(path_, *options_.untrusted_roots, TrustedKind::kFile, false);
    if (!file) throw_invalid(path_, untrusted_problem(file.error().message));
    if (::fstat(file.value().fd.get(), &checked) != 0) throw_invalid(path_, "cannot stat");
    path = file.value().path;
  }
  // No O_CREAT: appending to a log that vanished would start a headerless file.
  const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("cannot open session log {}", text::quoted(path_)));
  }
  struct stat opened {};
  if (options_.untrusted_roots &&
      (::fstat(fd.get(), &opened) != 0 || opened.st_dev != checked.st_dev ||
       opened.st_ino != checked.st_ino)) {
    throw_invalid(path_, "the file changed while it was checked");
  }
  write_line(fd.get(), path_, line, options_.fsync);
}

void SessionLog::append(const SandboxModeEvent& event) const {
  Json payload{{"mode", wire_name(event.mode)}};
  if (event.delegated) payload["source"] = kDelegationSource;
  append_line(dump_line(Json{{"type", kSandboxModeEventType}, {"payload", payload}}));
}

namespace {

Json optional_json(const std::optional<std::string>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// Anything a command's argv holds, even bytes that are not UTF-8 (shown as U+FFFD): an audit
// line must never fail to be written because of what it records. ASCII only: a record's path
// may hold C1 controls, DEL or line separators, which JSON allows raw; escaped as \uXXXX they
// read back the same and never reach a terminal that prints the log.
std::string dump_audit_line(const Json& value) {
  return value.dump(-1, ' ', true, Json::error_handler_t::replace) + "\n";
}

}  // namespace

void record_run(const SessionLog& session, const SandboxRunEvent& event) {
  Json payload{{"argv", event.argv},
               {"mode", wire_name(event.mode)},
               {"workspace", event.workspace_root},
               {"backend", event.backend.empty() ? Json(nullptr) : Json(event.backend)},
               {"enforcement", optional_json(event.enforcement)},
               {"exitCode", event.exit_code ? Json(*event.exit_code) : Json(nullptr)},
               {"signal", optional_json(event.signal)},
               {"timedOut", event.timed_out},
               {"denied", event.denied},
               {"denial", event.denied ? Json(event.denial) : Json(nullptr)}};
  Json denials = Json::array();
  for (const Denial& denial : event.denials.records) {
    denials.push_back({{"op", denial.op},
                       {"path", denial.path},
                       {"rule", denial.rule},
                       {"pid", denial.pid ? Json(*denial.pid) : Json(nullptr)},
                       {"exe", denial.exe}});
  }
  payload["denialSource"] =
      event.denial_source ? Json(wire_name(*event.denial_source)) : Json(nullptr);
  payload["denials"] = std::move(denials);
  payload["denialCount"] = event.denials.total;
  if (event.job) payload["job"] = *event.job;
  if (event.job_state) payload["jobState"] = *event.job_state;
  session.append_line(dump_audit_line(Json{{"type", kSandboxRunEventType}, {"payload", payload}}));
}

void record_refusal(const SessionLog& session, const SandboxRefusalEvent& event) {
  Json payload{{"argv", event.argv},
               {"mode", wire_name(event.mode)},
               {"workspace", event.workspace_root},
               {"code", event.code},
               {"reason", event.reason}};
  if (event.job) payload["job"] = *event.job;
  session.append_line(
      dump_audit_line(Json{{"type", kSandboxRefusedEventType}, {"payload", payload}}));
}

void set_sandbox_mode(const SessionLog& session, SandboxMode mode) {
  session.append(SandboxModeEvent{mode, false});
}

std::optional<SandboxMode> delegate_sandbox_mode(const SessionLog& parent,
                                                 const SessionLog& child) {
  const std::optional<SandboxMode> mode = effective_sandbox_mode(parent.sandbox_mode_events());
  if (mode) child.append(SandboxModeEvent{*mode, true});
  return mode;
}

}  // namespace dsh::sandbox
