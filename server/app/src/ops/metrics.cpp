#include "swarmfield/server/ops/metrics.hpp"

#include <cmath>
#include <cstdio>

#include "swarmfield/cli/version.hpp"
#include "swarmfield/protocol/transport/messages.hpp"

namespace swarmfield::server {

void DurationHistogram::observe(double seconds) noexcept {
  if (!(seconds > 0.0)) seconds = 0.0;
  std::size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  ++counts[i];
  sum_s += seconds;
  ++count;
}

namespace {

// Label values: backslash, double quote and newline escaped (exposition format 0.0.4).
std::string label_value(std::string_view v) {
  std::string out;
  for (char ch : v) {
    if (ch == '\\') out += "\\\\";
    else if (ch == '"') out += "\\\"";
    else if (ch == '\n') out += "\\n";
    else out += ch;
  }
  return out;
}

static_assert(cli::kWireProtocolVersion == protocol::kProtocolVersion, "cli/version.hpp names the wire protocol");

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

class Writer {
 public:
  /// Every name gets `prefix` in front (ours, or none for the standard process_* families).
  explicit Writer(std::string_view prefix = "swarmfield_") : prefix_(prefix) {}
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += prefix_;
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += prefix_;
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  void sample(std::string_view name, std::uint64_t v, std::string_view labels = {}) {
    sample_text(name, std::to_string(v), labels);
  }
  void sample_text(std::string_view name, const std::string& v, std::string_view labels = {}) {
    out_ += prefix_;
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      out_ += labels;
      out_ += '}';
    }
    out_ += ' ';
    out_ += v;
    out_ += '\n';
  }
  void counter(std::string_view name, std::string_view help, std::uint64_t v) {
    family(name, "counter", help);
    sample(name, v);
  }
  void gauge(std::string_view name, std::string_view help, std::uint64_t v) {
    family(name, "gauge", help);
    sample(name, v);
  }
  void histogram(std::string_view name, std::string_view help, const DurationHistogram& h) {
    family(name, "histogram", help);
    histogram_samples(name, h, {});
  }
  /// One histogram's samples; `labels` (may be empty) go before each bucket's le.
  void histogram_samples(std::string_view name, const DurationHistogram& h, const std::string& labels) {
    const std::string bucket = std::string(name) + "_bucket";
    const std::string before_le = labels.empty() ? std::string() : labels + ",";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < DurationHistogram::kBounds.size(); ++i) {
      cumulative += h.counts[i];
      sample(bucket, cumulative, before_le + "le=\"" + number(DurationHistogram::kBounds[i]) + "\"");
    }
    cumulative += h.counts.back();
    sample(bucket, cumulative, before_le + "le=\"+Inf\"");
    sample_text(std::string(name) + "_sum", number(h.sum_s), labels);
    sample(std::string(name) + "_count", h.count, labels);
  }
  void gauge_text(std::string_view name, std::string_view help, const std::string& v) {
    family(name, "gauge", help);
    sample_text(name, v);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string_view prefix_;
  std::string out_;
};

}  // namespace

std::string render_metrics(const MetricsSnapshot& m, const MetricsLabels& labels) {
  Writer w;
  w.family("build_info", "gauge", "The server's version and wire protocol version (value always 1).");
  w.sample_text("build_info", "1",
                std::string("version=\"") + cli::kVersion + "\",protocol=\"" + std::to_string(protocol::kProtocolVersion) + "\"");
  w.counter("ticks_total", "Simulation ticks run.", m.ticks);
  w.histogram("tick_duration_seconds", "Wall time of a whole tick (inputs, world step, snapshots).", m.tick_duration);
  w.counter("tick_overruns_total", "Times the tick loop found itself one tick or more behind.", m.overruns);
  w.counter("skipped_ticks_total", "Ticks dropped by the catch-up cap (simulated time skipped).", m.skipped_ticks);
  w.counter("field_rebuilds_total", "Completed flow field builds.", m.field_rebuilds);
  w.histogram("field_rebuild_duration_seconds", "Wall time of the field work on ticks that rebuilt.", m.rebuild_duration);
  w.family("tick_phase_duration_seconds", "histogram",
           "Wall time of each phase of a tick: fields (inputs, field work), swarm (world step, rules), snapshots.");
  for (std::size_t p = 0; p < kTickPhaseNames.size(); ++p) {
    w.histogram_samples("tick_phase_duration_seconds", m.phase_duration[p],
                        std::string("phase=\"") + kTickPhaseNames[p] + "\"");
  }
  w.family("agents", "gauge", "Agents in the swarm, by kind.");
  for (std::size_t k = 0; k < m.kind_count && k < kMaxMetricKinds; ++k) {
    const std::string name = labels.kind_names != nullptr ? labels.kind_names[k] : std::to_string(k);
    w.sample("agents", m.agents_by_kind[k], "kind=\"" + label_value(name) + "\"");
  }
  w.gauge("players", "Players in the world.", m.players);
  w.gauge("clients", "Joined clients (viewers and players).", m.clients);
  w.counter("connections_accepted_total", "TCP connections accepted.", m.connections_accepted);
  w.family("sent_bytes_total", "counter", "Bytes sent, by transport (TCP frames, UDP packets).");
  w.sample("sent_bytes_total", m.tcp_bytes_sent, "transport=\"tcp\"");
  w.sample("sent_bytes_total", m.udp_bytes_sent, "transport=\"udp\"");
  w.family("received_bytes_total", "counter", "Bytes received, by transport (complete TCP frames, UDP datagrams).");
  w.sample("received_bytes_total", m.tcp_bytes_received, "transport=\"tcp\"");
  w.sample("received_bytes_total", m.udp_bytes_received, "transport=\"udp\"");
  w.counter("tcp_frames_received_total", "Complete TCP frames received.", m.tcp_frames_received);
  w.counter("datagrams_sent_total", "UDP datagrams sent.", m.udp_datagrams_sent);
  w.counter("datagrams_received_total", "UDP datagrams read.", m.udp_datagrams_received);
  w.family("udp_dropped_total", "counter", "UDP datagrams dropped, by reason (protocol/README.md).");
  for (std::size_t r = 0; r < m.drop_reason_count && r < kMaxDropReasons; ++r) {
    const std::string name = labels.drop_reasons != nullptr ? labels.drop_reasons[r] : std::to_string(r);
    w.sample("udp_dropped_total", m.udp_drops[r], "reason=\"" + label_value(name) + "\"");
  }
  w.counter("evictions_total", "Clients dropped because their send queue overflowed.", m.evictions);
  w.counter("tcp_bad_frames_total", "TCP frames that failed verification or were unexpected.", m.bad_frames);
  w.family("connection_timeouts_total", "counter", "Connections closed by a timeout, by timeout.");
  w.sample("connection_timeouts_total", m.hello_timeouts, "timeout=\"hello\"");
  w.sample("connection_timeouts_total", m.idle_timeouts, "timeout=\"idle\"");
  w.sample("connection_timeouts_total", m.frame_timeouts, "timeout=\"frame\"");
  w.family("connections_refused_total", "counter", "Connections refused, by reason.");
  w.sample("connections_refused_total", m.refused_full, "reason=\"full\"");
  w.sample("connections_refused_total", m.refused_per_address, "reason=\"per_address\"");
  w.gauge("draining", "1 while the server drains after SIGTERM (no new clients).", m.draining ? 1 : 0);
  return w.take();
}

std::string render_process_metrics(const ProcessStats& s) {
  Writer w("");
  w.family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
  w.sample_text("process_cpu_seconds_total", number(s.cpu_seconds));
  w.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", s.resident_bytes);
  w.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", s.virtual_bytes);
  w.gauge("process_open_fds", "Number of open file descriptors.", s.open_fds);
  w.gauge("process_max_fds", "Maximum number of open file descriptors.", s.max_fds);
  w.gauge_text("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
               number(s.start_time_seconds));
  return w.take();
}

}  // namespace swarmfield::server
