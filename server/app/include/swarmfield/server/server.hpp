#pragma once
// The server: owns the World and the io_context; runs the fixed tick on a steady_timer in the
// same (single) thread as the sockets, so socket handlers only record inputs and the tick
// applies them. Handshake, input routing, snapshot fan-out, status log, graceful shutdown.
// Defined by concept: server.cpp (life), server_tick.cpp, server_clients.cpp,
// server_snapshots.cpp, server_summary.cpp, server_operations.cpp.
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "swarmfield/protocol/transport/connect_token.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/transport/resume.hpp"
#include "swarmfield/rules/game_rules.hpp"
#include "swarmfield/server/net/client_registry.hpp"
#include "swarmfield/server/net/map_transfer.hpp"
#include "swarmfield/server/ops/metrics.hpp"
#include "swarmfield/server/ops/operations_state.hpp"
#include "swarmfield/server/replay/replay_file.hpp"
#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/server/recent_deaths.hpp"
#include "swarmfield/server/snapshot_builder.hpp"
#include "swarmfield/server/net/forwarded_peers.hpp"
#include "swarmfield/server/net/per_address_count.hpp"
#include "swarmfield/server/net/tcp_server.hpp"
#include "swarmfield/server/net/used_tokens.hpp"
#include "swarmfield/server/tick_scheduler.hpp"
#include "swarmfield/server/tick_stats.hpp"
#include "swarmfield/server/net/udp_endpoint.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::server {

class OperationsHttp;
class WebGateway;
class AgonesClient;
class ReplayPlayback;

/// Totals printed at exit.
struct ServerSummary {
  std::uint64_t ticks = 0;
  /// The match's id from an Agones allocation (swarmfield.dev/match-id; [A-Za-z0-9._-]); "" = none,
  /// and then no match_id key in line().
  std::string match_id;
  /// Completed field rebuilds summed over the size classes (a goal change rebuilds each class
  /// present: class 1 and the classes of bigger kinds); per class in rebuilds_by_class.
  std::uint64_t rebuilds = 0;
  std::uint64_t overruns = 0;       ///< scheduler polls that found the loop >= 1 tick behind
  std::uint64_t skipped_ticks = 0;  ///< ticks dropped by the catch-up cap
  std::uint64_t clients = 0;        ///< TCP connections accepted
  std::uint64_t bytes_sent = 0;     ///< TCP + UDP payload bytes written
  std::uint64_t bad_frames = 0;
  std::uint64_t bad_datagrams = 0;
  std::uint64_t evicted = 0;
  double tick_p50_ms = 0.0;  ///< whole tick (inputs + step + snapshots), over the last ~65k ticks
  double tick_p99_ms = 0.0;
  double step_p50_ms = 0.0;  ///< World phases only (fields + swarm)
  double step_p99_ms = 0.0;
  double rebuild_p50_ms = 0.0;  ///< World::begin_tick on ticks that rebuilt the fields (0 if none did)
  double rebuild_p99_ms = 0.0;
  // Appended after the keys above (scripts parse the line by key).
  double tick_max_ms = 0.0;      ///< longest tick since start
  double swarm_p50_ms = 0.0;     ///< World::finish_tick (spawner, swarm step, contacts, hash)
  double swarm_p99_ms = 0.0;
  double snapshot_p50_ms = 0.0;  ///< after the World step: snapshot encoding + sends, connection sweep
  double snapshot_p99_ms = 0.0;
  std::uint64_t builds_started = 0;  ///< field builds started, all classes (completed = rebuilds, + abandoned, + in progress)
  /// The two above per size class (index = class - 1), printed comma-separated, class 1 first
  /// ("rebuilds_by_class=12,6,0,0": a parser that reads one number gets class 1's).
  std::array<std::uint64_t, sim::kMaxSizeClass> rebuilds_by_class{};
  std::array<std::uint64_t, sim::kMaxSizeClass> builds_started_by_class{};
  /// Ticks whose goal cells (every player's cell, in player order) differed from the previous
  /// tick's: how often the fields' inputs changed. Equal to ticks when a player changes cell
  /// every tick; rebuilds can only follow every ceil(cost / budget) + 1 ticks when time-sliced.
  std::uint64_t goal_changes = 0;
  std::uint64_t stale_ticks = 0;  ///< ticks whose agents read fields built for older goal cells
  double peak_rss_mib = 0.0;      ///< the process's peak resident memory so far (getrusage ru_maxrss), MiB
  // Connection security (appended): UDP datagrams read, address challenges sent and bytes in
  // them (all we ever send to an unconfirmed address), addresses confirmed, UDP streams stopped
  // for lack of acks; TCP connections closed by each timeout or refused per address; the UDP
  // receive buffer the kernel granted; and every dropped datagram by reason (drop_<reason>=,
  // in UdpDrop order; bad_datagrams above is their sum).
  std::uint64_t udp_received = 0;
  std::uint64_t udp_challenges = 0;
  std::uint64_t udp_challenge_bytes = 0;
  std::uint64_t udp_confirmed = 0;
  std::uint64_t udp_unbound = 0;
  std::uint64_t udp_inputs = 0;
  std::uint64_t tcp_inputs = 0;
  std::uint64_t hello_timeouts = 0;
  std::uint64_t idle_timeouts = 0;
  std::uint64_t frame_timeouts = 0;
  std::uint64_t tcp_budget_stops = 0;  ///< ticks a connection's reading stopped at TcpSession::kFramesPerTick frames
  std::uint64_t refused_per_address = 0;
  std::uint64_t udp_rcvbuf_kb = 0;
  std::array<std::uint64_t, static_cast<std::size_t>(UdpDrop::kCount)> udp_drops{};
  // Delta snapshots (appended): snapshots built (over TCP of them), TCP snapshots not built
  // because the previous one was still queued, payload bytes, agent entries sent (updated +
  // added), their ratio, and the largest UDP datagram sent (bytes).
  std::uint64_t snapshots_sent = 0;
  std::uint64_t snapshots_tcp = 0;
  std::uint64_t snapshots_deferred = 0;
  std::uint64_t snapshots_shared = 0;   ///< sent from a shared spectator stream's encoding
  std::uint64_t shared_encodes = 0;     ///< encodes of shared spectator streams
  std::uint64_t spectator_joins = 0;    ///< shared streams (re)started for joining spectators
  /// Viewers (appended after spectator_joins): the lowest rate of snapshots sent to one viewer
  /// (snapshots per second from its first to its newest, over viewers sent snapshots for at
  /// least 1 s, those that left included; 0 when none) and how many viewers that covers.
  double viewer_snapshots_per_s_min = 0.0;
  std::uint64_t viewers_rated = 0;
  std::uint64_t snapshot_bytes = 0;
  std::uint64_t snapshot_agents = 0;
  double bytes_per_agent = 0.0;
  std::uint64_t max_datagram = 0;
  /// Agents the spawner did not place because the map was at its density limit (appended).
  std::uint64_t spawns_held_back = 0;
  /// Members of shared spectator streams over UDP that fell kSharedAckLag snapshots behind in
  /// their acknowledgements and went back to their own streams (appended).
  std::uint64_t spectator_lags = 0;
  /// The game (appended): agents killed, player deaths, shots fired (World), player actions
  /// refused (fire or build from a viewer, fire with an aim of no direction, a barricade the
  /// World would not build: out of reach, on a wall or someone, over the budget).
  std::uint64_t kills = 0;
  std::uint64_t player_deaths = 0;
  std::uint64_t shots = 0;
  std::uint64_t actions_refused = 0;
  /// Barricades players built and the horde broke (appended).
  std::uint64_t barricades_built = 0;
  std::uint64_t barricades_fallen = 0;
  /// Comings of the [[waves]] table started (repeats counted), appended.
  std::uint64_t waves = 0;
  /// The rules' score summed over players (the default rules: per kill by kind, -25 a death), appended.
  std::int64_t score = 0;
  /// Connect tokens (--auth tokens), appended: Hellos admitted with a token; Hellos without one
  /// (or with one to an --auth open server); tokens refused by reason; and frames of sealed
  /// streams that did not open (injected or forged; the connection is closed).
  std::uint64_t tokens_accepted = 0;
  std::uint64_t tokens_missing = 0;
  std::uint64_t tokens_expired = 0;
  std::uint64_t tokens_forged = 0;
  std::uint64_t tokens_replayed = 0;
  std::uint64_t tokens_wrong_server = 0;
  std::uint64_t tokens_wrong_protocol = 0;
  std::uint64_t tokens_malformed = 0;
  std::uint64_t unsealed_frames = 0;
  /// Slot squatting (appended): clients closed for a trickle of messages (also in idle_timeouts)
  /// and Hellos refused because their address held its share of slots.
  std::uint64_t trickle_timeouts = 0;
  std::uint64_t refused_address_share = 0;
  /// Reconnects (appended): sessions resumed, resume Hellos refused (unknown, used or expired
  /// secret), connections lost with the session kept, kept sessions that expired unresumed.
  std::uint64_t resumes = 0;
  std::uint64_t resumes_refused = 0;
  std::uint64_t sessions_detached = 0;
  std::uint64_t sessions_expired = 0;
  /// The browser spectator (appended; 0 without --web-port): HTTP answers 200 (page files),
  /// WebSockets relayed to the game port, connections refused (limits), bad requests (4xx,
  /// timeouts, refused WebSockets).
  std::uint64_t web_pages = 0;
  std::uint64_t web_sockets = 0;
  std::uint64_t web_refused = 0;
  std::uint64_t web_bad_requests = 0;
  std::uint64_t web_spectators_full = 0;  ///< WebSockets refused at --max-web-spectators
  std::uint64_t web_evicted = 0;  ///< connections still sending their request closed for a new one (port full)
  /// "ticks=.. rebuilds=.. overruns=.. clients=.. bytes_sent=.. bad_frames=.. bad_datagrams=.. ..."
  [[nodiscard]] std::string line() const;
};

class Server final : public TcpListener {
 public:
  using Clock = std::chrono::steady_clock;

  /// Builds the world on `map` (agents spawn on the first tick) and the map transfer.
  /// `spawn_cells`: the map file's spawn cells, where players appear (player_spawn_point);
  /// without any, players appear apart round the map's centre.
  Server(const ServerConfig& config, sim::GridMap map, std::string map_name,
         std::vector<sim::CellCoord> spawn_cells = {});
  ~Server() override;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds TCP and UDP (the same port; with port 0 a free TCP port, then UDP on the same
  /// number if free, else any). Logs "listening tcp=P udp=Q". False + `error` on failure.
  bool open(std::string& error);
  /// Runs the tick loop and all networking until stop() finishes. Call after open().
  void run();
  /// Graceful stop: Bye to every client, a short flush (<= 1 s), then run() returns. Calling
  /// it again while stopping finishes at once. Must be called on the io_context thread (e.g.
  /// from a signal_set handler), or posted there.
  void stop(const std::string& reason);

  [[nodiscard]] asio::io_context& io() noexcept { return io_; }
  /// --auth tokens: the key connect tokens are sealed with (read from --key-file by main).
  /// Without one every Hello is admitted as --auth open.
  void set_token_key(const protocol::TokenKey& key) { token_key_ = key; }
  [[nodiscard]] std::uint16_t tcp_port() const noexcept { return tcp_.port(); }
  [[nodiscard]] std::uint16_t udp_port() const noexcept { return udp_.port(); }
  [[nodiscard]] ServerSummary summary() const;
  [[nodiscard]] const sim::World& world() const noexcept { return world_; }
  /// Serve `replay` (whose map and simulation settings this Server was built with) instead of
  /// a live match: its inputs drive the World, players may not join, the server stops at its
  /// end. Call before run().
  void play(Replay replay);
  /// Bytes a recording (--record) holds before its first tick: the file's start and its header
  /// record (the settings as TOML and the compressed map). A --record-max-mb at or below it
  /// would end the recording at tick 1. Compresses the map once (O(cells)).
  [[nodiscard]] std::uint64_t recording_header_bytes() const;

  // TcpListener
  void on_message(TcpSession& session, protocol::TcpMessage& message) override;
  void on_disconnected(TcpSession& session) override;

 private:
  void handle_hello(TcpSession& session, const protocol::Hello& hello);
  // `via_udp`: it came in a sealed datagram from the client's confirmed address (else over TCP).
  void apply_input(ClientState& client, const protocol::Input& input, bool via_udp);
  /// A snapshot acknowledgement (from an Input or a SnapshotAck): to the client's stream (its
  /// baselines) and its AckTracker (the first packet of the newest snapshot acknowledged).
  // Every ack moves the snapshot baselines on; only one from the confirmed UDP address
  // (`via_udp`) shows that address still receives (the ack timeout's evidence).
  void on_snapshot_ack(ClientState& client, const protocol::SnapshotAck& ack, bool via_udp);
  /// Once a second: closes clients idle longer than --idle-timeout.
  void close_idle_clients(Clock::time_point now);
  /// A client's first or resumed connection: maps it to `client`, a fresh snapshot route, the
  /// Welcome, the map and the barricades. False when the session could not queue them (closed).
  bool attach_session(TcpSession& session, ClientState& client);
  /// Reconnects (server_resume.cpp): a Hello with a resume secret gets its lost session back
  /// (fresh keys derived from the secret, the same client and player), or a clear refusal.
  void resume_session(TcpSession& session, const protocol::Hello& hello);
  /// The client's connection dropped: its session (and player, standing still) waits
  /// --reconnect-grace for a resume.
  void detach(ClientState& client);
  /// The session ends for good when its connection does (Bye, an idle close): no resume.
  void forbid_resume(ClientState& client);
  /// Sessions that waited longer than --reconnect-grace: removed with their players.
  void expire_detached(Clock::time_point now);
  /// The client and its player leave (logged).
  void remove_client(std::uint32_t id);
  /// Snapshots per second sent to a viewer from its first to its newest; nullopt for a player
  /// or a viewer sent snapshots for less than a second (too short to be a rate).
  [[nodiscard]] static std::optional<double> viewer_snapshot_rate(const ClientState& client) noexcept;
  void schedule_tick();
  void on_tick_timer();
  /// Runs the next tick of the current batch (batch_remaining_); posts itself for the next
  /// catch-up tick so socket handlers run in between; after the last one re-arms the timer.
  void run_batch_step();
  /// One tick: drains waiting UDP inputs, applies the newest intent per client, steps the
  /// World; a due snapshot is sent now unless the batch's last tick is expected within a
  /// snapshot period (then that tick sends it).
  void run_tick(bool last_of_batch);
  /// After a World step: counts a goal change when the players' cells differ from the last
  /// tick's, and a stale tick when the front fields are out of date.
  void count_goal_change();
  void send_snapshots();
  // Shared spectator streams (--spectator-join-interval; server_snapshots.cpp): who may share
  // (a viewer with a view), joining them, leaving one for the client's own stream.
  [[nodiscard]] static bool shares_spectator_stream(const ClientState& c, std::uint64_t join_ticks) noexcept;
  // A client's snapshot stream settings (--client-kbps, --snapshot-hz); a shared stream's too.
  [[nodiscard]] ClientSnapshotParams snapshot_params() const;
  void join_spectator_groups(std::uint64_t tick, std::uint64_t join_ticks);
  // A shared spectator stream takes joiners at every snapshot tick for this long after it was made
  // (its members' views are still filling), then every --spectator-join-interval.
  static constexpr double kSpectatorBurstSeconds = 2.0;
  // A shared stream over UDP is encoded against the newest frame every member acknowledged. A
  // member whose newest acknowledgement is more than this many of the stream's snapshots old
  // (none at all this many after it joined) goes back to its own stream, and so do the members
  // that lack the newest frame most members hold when no frame this recent is held by all: one
  // member that stops acknowledging, or loses datagrams, must not hold every other member's
  // deltas on an old baseline.
  static constexpr std::uint32_t kSharedAckLag = 16;
  // Members of the UDP shared streams: evicts the laggards, gives each stream its baseline.
  void settle_udp_groups(std::uint64_t tick);
  /// After the World's step: the rules (their log lines, a stop, the match's end).
  void run_rules();
  // --shutdown-when-empty: stops the server once the players have all left and none came back in time.
  void check_empty(Clock::time_point now);
  // ---- map deltas (server_map_deltas.cpp) ------------------------------------------------------
  /// End of a tick: the World's barricade changes to every client (MapDelta frames), then cleared.
  void send_map_deltas();
  /// After the map chunks: every standing barricade, so a client that joins late sees them.
  /// False when the session went away (closed or evicted).
  bool send_barricades(TcpSession& session);
  /// `cells` as MapDelta frames of at most kMaxMapDeltaCells cells, each with the next revision.
  std::vector<Frame> map_delta_frames(std::span<const protocol::MapCellChange> cells);
  void log_status(Clock::time_point now);
  void poll_flush();
  void finish();

  // ---- operations hooks (server_operations.cpp) ----------------------------------------------
  /// After the game sockets are open: the HTTP endpoints (when --http-port >= 0). False + error.
  bool start_operations(std::string& error);
  /// The header of a recording of this match (--record): settings, map, tick length.
  [[nodiscard]] ReplayHeader recording_header() const;
  /// End of every tick: counts the tick into the histograms and publishes the metrics snapshot.
  /// `phase_ms`: the tick's phases in ms, by kTickPhaseNames (metrics.hpp).
  void publish_metrics(double tick_ms, double rebuild_ms, bool rebuilt,
                       const std::array<double, kTickPhaseNames.size()>& phase_ms, Clock::time_point now);
  /// Stop: not ready any more (drain), and on finish the HTTP threads are stopped.
  void operations_draining();
  /// Starts the browser spectator (--web-port; web_gateway.hpp). False + `error` on failure.
  bool start_web_gateway(std::string& error);
  // --web-root, or 'web' beside the executable's folder when it is empty.
  [[nodiscard]] std::string web_root() const;
 public:
  /// The browser page's folder `config` names (--web-root, or 'web' beside the executable's
  /// folder when it is empty), so main can check it before the map loads.
  [[nodiscard]] static std::string web_root_of(const ServerConfig& config);

 private:
  void stop_operations();
  /// A player joined (Agones: Allocate once; the player into the players List) / left (out of
  /// the List).
  void operations_player_joined(const ClientState& client);
  void operations_player_left(const ClientState& client);
  /// Every tick: the match settings an Agones allocation set (AgonesClient::take_match_settings),
  /// applied when they arrive: --duration (counted from the allocation), --shutdown-when-empty,
  /// and match-id (logged, in the summary).
  void apply_allocation_settings();
  /// (Re)starts the --duration timer from now (none when duration_s is 0); `origin` ends the
  /// stop reason ("" or " (set at allocation)"; a string literal).
  void arm_duration_timer(const char* origin);
  /// Replays (server_operations.cpp): the input applied to the World, into the recording.
  void record_input(const ReplayEvent& event);
  /// After every World step: the recording's tick (inputs, state hash); a served recording's
  /// state hash is compared.
  void after_world_step();
  /// Serving a recording: applies its inputs for this tick; false at its end (stop() called).
  bool play_recorded_inputs();
  /// Serving a recording: a player's Hello is refused (Error, closed); true if it was.
  bool refuse_player_in_playback(TcpSession& session, const protocol::Hello& hello);
  /// --auth tokens: opens and checks the Hello's connect token (connect_token.hpp: seal,
  /// protocol, expiry, this server among its addresses, not used before). Refuses (clear Error,
  /// counted per reason) and returns nullopt, or returns the opened token. --auth open: refuses
  /// a Hello that carries a token (the client would wait for a sealed stream).
  std::optional<protocol::OpenedToken> admit_token(TcpSession& session, const protocol::Hello& hello);
  [[nodiscard]] bool names_this_server(const std::vector<std::string>& addresses) const;
  /// Slots one address may hold (--max-clients-per-address, auto by --auth); 0 = no share.
  /// (--auth tokens with --web-spectators-open: handle_hello gives token-less spectators an
  /// auto share of web_spectator_slots() / 8, at least 1.)
  [[nodiscard]] std::size_t client_share_per_address() const noexcept;
  /// When the session's address already holds `share` clients (share != 0), refuses it: counted
  /// (refused_address_share_), a rate-limited line ("<what>: server full for your address ...",
  /// `slots` the slots the share is of) and a ServerFull Error, then the connection closes.
  /// Returns whether it refused.
  bool refuse_over_address_share(TcpSession& session, std::size_t share, std::size_t slots, std::string_view what);
  /// Browser spectators at once: --max-web-spectators, else half of --max-clients (at least 1).
  [[nodiscard]] std::size_t web_spectator_slots() const noexcept;
  /// The UDP port Welcome announces: Agones' public port, else --public-udp-port, else bound.
  [[nodiscard]] std::uint16_t announced_udp_port() const noexcept;

  ServerConfig config_;
  asio::io_context io_;
  sim::World world_;
  MapTransfer map_transfer_;
  sim::Vec2 spawn_;                         // the centre players spawn round (without spawn cells)
  std::vector<sim::CellCoord> spawn_cells_;  // the map's spawn cells
  ClientRegistry clients_;
  ForwardedPeers forwarded_peers_;  // the web gateway's relays to tcp_ (outlives both)
  TcpServer tcp_;
  UdpEndpoint udp_;
  std::map<std::uint32_t, std::uint64_t> session_of_client_;  // client id -> TCP session id

  asio::steady_timer tick_timer_;
  asio::steady_timer duration_timer_;
  asio::steady_timer flush_timer_;
  TickScheduler scheduler_;
  float dt_s_;
  // The game's rules (world_setup.hpp make_rules), called after every World step.
  std::unique_ptr<rules::GameRules> rules_;
  std::unique_ptr<rules::RulesContext> rules_context_;
  rules::RulesTracker rules_tracker_;
  bool rules_stop_logged_ = false;
  Clock::duration snapshot_period_;      // 1 / snapshot_hz
  std::uint32_t batch_remaining_ = 0;    // ticks of the current catch-up batch still to run
  std::uint32_t snapshot_accumulator_ = 0;
  bool snapshot_due_ = false;
  Clock::time_point next_resync_warning_{};
  std::uint64_t resyncs_since_warning_ = 0;
  std::uint64_t skipped_since_warning_ = 0;
  TickStats tick_stats_{65536};
  TickStats step_stats_{65536};
  TickStats rebuild_stats_{65536};
  TickStats swarm_stats_{65536};
  TickStats snapshot_stats_{65536};
  std::vector<sim::CellCoord> goal_cells_;       // players' cells this tick (reused)
  std::vector<sim::CellCoord> prev_goal_cells_;  // ... and last tick
  std::uint64_t goal_changes_ = 0;
  std::uint64_t stale_ticks_ = 0;
  TickStats window_tick_stats_{4096};
  TickStats window_step_stats_{4096};
  Clock::time_point next_status_;
  Clock::time_point last_status_;
  std::uint64_t last_status_bytes_ = 0;
  Clock::time_point stop_started_;

  // Snapshots: the world as every client's snapshot of this tick sees it, and per client its
  // stream plus the first UDP packet of each recent snapshot (for the AckTracker).
  struct SnapshotRoute {
    explicit SnapshotRoute(const ClientSnapshotParams& params) : stream(params) {}
    ClientSnapshotStream stream;
    std::array<std::pair<std::uint32_t, std::uint64_t>, 32> first_packet{};  // by sequence % 32
    std::vector<std::uint8_t> payload;  // this tick's snapshot (built in parallel, sent after)
    std::uint64_t group = 0;              // the shared spectator stream it is sent (0 = its own)
    std::uint32_t last_sequence = 0;      // of the last snapshot sent to the client, whichever stream
    std::uint64_t left_group_tick = 0;    // world tick it last left a shared stream (0 = never)
    // In a shared stream over UDP: the stream's sequences it acknowledged since it joined, and
    // the first one it was sent (the stream's restart for it).
    protocol::SnapshotAck group_acks;
    std::uint32_t group_first = 0;
  };
  // A shared spectator stream (--spectator-join-interval): one encoding per snapshot tick for the
  // spectators whose snapshots cover `area`, each sent a copy with its own echo time.
  // Over UDP (`udp`) its baseline is the newest frame every member acknowledged; a member that
  // falls kSharedAckLag snapshots behind goes back to its own stream.
  struct SpectatorGroup {
    SpectatorGroup(const ClientSnapshotParams& params, bool over_udp) : stream(params), udp(over_udp) {
      stream.set_reliable(!over_udp);
    }
    ClientSnapshotStream stream;
    bool udp;                        // members on UDP (else TCP; a stream never mixes them)
    std::vector<std::uint8_t> payload;
    protocol::QuantizedRect area;
    ViewRect view;                   // a member's view (every member's gives `area`)
    std::uint64_t last_join_tick = 0;  // world tick of its last (re)start
    std::uint64_t started_tick = 0;    // world tick it was made
    bool build = false;              // has members this tick
    bool built = false;
  };
  // One snapshot to build this tick: its client, transport and route.
  struct SnapshotJob {
    ClientState* client;
    TcpSession* session;
    SnapshotRoute* route;
    bool udp;
    bool built;
    SpectatorGroup* group = nullptr;  // sent the group's encoding instead of its own
  };
  void leave_spectator_group(SnapshotRoute& route, std::uint64_t tick);
  SnapshotWorldState snapshot_world_;
  RecentDeaths recent_deaths_;  // for the snapshots' death flags
  // --shutdown-when-empty: a player has been in the world; since when none is.
  bool had_player_ = false;
  std::optional<Clock::time_point> empty_since_;
  std::string match_id_;  // an allocation's swarmfield.dev/match-id ("" = none)
  std::map<std::uint32_t, std::unique_ptr<SnapshotRoute>> snapshot_routes_;  // client id ->
  std::vector<SnapshotJob> snapshot_jobs_;                     // reused every send
  std::map<std::uint64_t, std::unique_ptr<SpectatorGroup>> spectator_groups_;  // by id
  std::uint64_t next_spectator_group_ = 1;
  std::vector<SpectatorGroup*> group_jobs_;  // groups to encode this tick (reused)
  struct JoinCandidate {
    protocol::QuantizedRect area;
    bool udp;
    std::size_t job;
  };
  std::vector<JoinCandidate> join_candidates_;  // reused every send
  std::vector<SnapshotJob*> group_members_;     // settle_udp_groups(), reused
  std::uint64_t snapshots_shared_ = 0;       // sent from a shared spectator stream
  std::uint64_t shared_encodes_ = 0;         // encodes of shared streams
  std::uint64_t spectator_joins_ = 0;        // shared streams (re)started for joining spectators
  std::uint64_t spectator_lags_ = 0;         // members of UDP shared streams sent back to their own
  // The lowest of some viewers' snapshot rates (viewer_snapshot_rate()) and how many they are.
  struct LowestRate {
    double min = 0.0;
    std::uint64_t count = 0;
    void add(double rate) noexcept {
      min = count == 0 ? rate : std::min(min, rate);
      ++count;
    }
  };
  LowestRate left_viewer_rates_;             // of the viewers that left
  // Clients' snapshots are independent: built on --threads threads (the swarm's pool is idle
  // between steps, but a World's pool is its own), sent from the io thread.
  std::unique_ptr<sim::WorkerPool> snapshot_pool_;
  std::vector<std::vector<std::uint8_t>> snapshot_fragments_;  // reused every send
  std::uint64_t snapshots_sent_ = 0;
  std::uint64_t snapshots_tcp_ = 0;
  std::uint64_t snapshots_deferred_ = 0;
  std::uint64_t snapshot_bytes_ = 0;
  std::uint64_t snapshot_agents_ = 0;

  bool running_ = false;
  bool stopping_ = false;
  bool finished_ = false;
  std::uint64_t snapshots_refused_ = 0;
  bool density_limit_logged_ = false;  // the first spawn cut at the density limit is logged, once
  std::uint64_t udp_unbound_ = 0;
  std::uint64_t idle_timeouts_ = 0;
  std::uint64_t trickle_timeouts_ = 0;        // of idle_timeouts_: a trickle of messages, not silence
  std::uint64_t refused_address_share_ = 0;   // Hellos refused: the address holds its share of slots
  PerAddressCount<asio::ip::address> clients_per_address_;
  // Each session's lines (joined, says bye, left, lost its connection, resumed) and
  // --shutdown-when-empty's "every player has left" / "a player joined": 256 in a row, then 16 a
  // second; the rest are counted (a join-and-leave loop wrote 1.9 MB of log a second).
  LineBudget session_lines_{16.0, 256.0};
  // Reconnects: lost sessions by a one-way name of their resume secret, and the counts.
  std::map<std::array<std::uint8_t, 32>, std::uint32_t> resume_index_;
  std::uint64_t resumes_ = 0;
  std::uint64_t resumes_refused_ = 0;
  std::uint64_t sessions_detached_ = 0;
  std::uint64_t sessions_expired_ = 0;
  // Connect tokens (--auth tokens): the key, the tokens taken, and the counts by outcome.
  std::optional<protocol::TokenKey> token_key_;
  UsedTokens used_tokens_;
  std::uint64_t tokens_accepted_ = 0;
  std::uint64_t tokens_missing_ = 0;  // Hellos without a token, and Hellos with one to an open server
  std::array<std::uint64_t, 6> token_refusals_{};  // by protocol::TokenRefusal
  std::uint64_t tcp_inputs_ = 0;
  std::uint64_t actions_refused_ = 0;  // fire or build from a viewer, an aim of no direction, a build refused
  std::uint32_t map_revision_ = 0;     // MapDelta revisions sent (increasing)
  std::uint64_t map_deltas_sent_ = 0;  // MapDelta frames (each sent to every client)
  std::vector<protocol::MapCellChange> map_cells_scratch_;

  OperationsState ops_;
  std::unique_ptr<OperationsHttp> http_;
  std::unique_ptr<WebGateway> web_;  // the browser spectator (--web-port)
  std::unique_ptr<AgonesClient> agones_;
  MetricsSnapshot metrics_;  // the tick thread's working copy (histograms accumulate here)
  ReplayWriter recorder_;
  std::unique_ptr<Replay> replay_;
  std::unique_ptr<ReplayPlayback> playback_;
  std::uint64_t playback_mismatches_ = 0;
};

}  // namespace swarmfield::server
