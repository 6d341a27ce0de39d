"""The agent serves its clients side by side: a peer that connects and stalls (says nothing, or
half a hello, or half a request) delays nobody else, many clients at once all get their own
answers, writes interleaved with reads stay consistent, a sync copy read slowly holds up no one,
and a listing in progress when the max TTL passes stops there, answered locked. The stalled connections are compared
with the agent's own per-connection timeout, never with the clock: another client must have its
answer while the stalled connection is still open (a serialized agent would have dropped it first)."""
import socket
import threading
import time

import agentwire
from agentsupport import DEADLINE, NO_SOURCE
from kcharness import EXIT_INTERACTION
from test_agent_process import running_agent

FIND = ["find", "generic", "-w", "-s"]


def still_open(sock: socket.socket) -> bool:
    """True while the agent has neither closed `sock` nor sent anything more on it."""
    sock.setblocking(False)
    try:
        sock.recv(1)   # end of stream, or data the agent should not have sent
        return False
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)


def stalled_peers(path) -> list[socket.socket]:
    """Connections that stop at each stage before a request: nothing sent, half a hello, a whole
    hello and half a request frame. The agent's hello is read off each (it speaks first)."""
    request = agentwire.frame(agentwire.REQUEST["find"], agentwire.find_body(agentwire.query("generic", service="x")))
    peers = []
    for prefix in (b"", agentwire.hello()[:5], agentwire.hello() + request[:7]):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)
        sock.connect(str(path))
        if prefix:
            sock.sendall(prefix)
        agentwire.read_hello(sock)
        peers.append(sock)
    return peers


def test_a_stalled_peer_delays_no_other_client(kc_ready):
    kc_ready.add_generic("github.com", "me", "hunter2")
    with running_agent(kc_ready, unlocked=True):
        peers = stalled_peers(agentwire.socket_path(kc_ready.home / "run", kc_ready.vault_path))
        try:
            # No password source: only the agent can answer.
            result = kc_ready.ok(FIND + ["github.com"], unset=NO_SOURCE)
            assert result.stdout == "hunter2\n"
            assert [still_open(peer) for peer in peers] == [True] * len(peers), \
                "the answer came only after the agent gave up on a stalled peer"
        finally:
            for peer in peers:
                peer.close()
        assert kc_ready.ok(FIND + ["github.com"], unset=NO_SOURCE).stdout == "hunter2\n"


def test_more_silent_peers_than_the_cap_delay_a_client_only_until_one_times_out(kc_ready):
    kc_ready.add_generic("github.com", "me", "hunter2")
    with running_agent(kc_ready, unlocked=True) as (_, path):
        peers = []
        try:
            for _ in range(16):   # the agent's cap (AgentConnections.maximum): each served, each silent
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(10)
                sock.connect(str(path))
                agentwire.read_hello(sock)
                peers.append(sock)
            result = kc_ready.ok(FIND + ["github.com"], unset=NO_SOURCE)
            assert result.stdout == "hunter2\n"
            assert not all(still_open(peer) for peer in peers), \
                "a client beyond the cap was served while every slot was taken"
        finally:
            for peer in peers:
                peer.close()


def slow_reader(path, request: bytes) -> tuple[socket.socket, agentwire.Connection]:
    """A connection with a tiny receive buffer (the agent soon waits for it) that sent `request`."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(20)
    sock.connect(str(path))
    sock.sendall(agentwire.hello())
    connection = agentwire.Connection.on(sock)
    agentwire.read_hello(sock)
    sock.sendall(request)
    return sock, connection


def add_big_items(path, count: int = 40) -> None:
    """Items of 64 KiB secrets through the agent: a listing or a copy of them takes megabytes."""
    for n in range(count):
        name, _ = agentwire.request(path, "add", agentwire.add_body("generic", b"x" * 65536, service=f"big-{n}"))
        assert name == "items", name


def test_a_sync_copy_read_slowly_delays_no_other_client(kc_ready):
    kc_ready.add_generic("github.com", "me", "hunter2")
    with running_agent(kc_ready, unlocked=True) as (_, path):
        add_big_items(path)
        # The live vault's file (a sync copy being made), whose reader stops after the counts.
        sock, connection = slow_reader(path, agentwire.frame(agentwire.REQUEST["liveVault"]))
        try:
            kind, more, _ = connection.read_frame()
            while kind == "warnings":
                kind, more, _ = connection.read_frame()
            assert (kind, more) == ("merged", True)
            assert kc_ready.ok(FIND + ["github.com"], unset=NO_SOURCE).stdout == "hunter2\n"
            # The copy was still being sent: it arrives whole (a serialized agent would have
            # dropped this reader after 5 s without progress before answering the find).
            received = 0
            while more:
                kind, more, body = connection.read_frame()
                assert kind == "merged", kind
                received += len(body)
            assert received > 40 * 65536
        finally:
            sock.close()


def test_many_clients_at_once_each_get_their_own_answer(kc_ready):
    services = [f"site-{n}" for n in range(8)]
    for service in services:
        kc_ready.add_generic(service, "me", f"secret of {service}")
    with running_agent(kc_ready, unlocked=True):
        answers = {}

        def reader(service):
            for _ in range(3):
                result = kc_ready.run(FIND + [service], unset=NO_SOURCE)
                answers.setdefault(service, []).append((result.returncode, result.stdout))

        threads = [threading.Thread(target=reader, args=(s,)) for s in services]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert answers == {s: [(0, f"secret of {s}\n")] * 3 for s in services}


def test_writes_interleaved_with_reads_stay_consistent(kc_ready):
    kc_ready.add_generic("stable", "me", "never changes")
    with running_agent(kc_ready, unlocked=True):
        written, read_back, failures = [], [], []

        def writer(worker):
            for n in range(4):
                service = f"w{worker}-{n}"
                result = kc_ready.run(["add", "generic", "-s", service, "-a", "me", "--password-stdin"],
                                      input=f"v-{service}", unset=NO_SOURCE)
                if result.returncode != 0:
                    failures.append(result)
                    continue
                written.append(service)
                # Acknowledged, so the very next read sees it.
                read_back.append((service, kc_ready.run(FIND + [service], unset=NO_SOURCE).stdout))

        def reader():
            for _ in range(6):
                read_back.append(("stable", kc_ready.run(FIND + ["stable"], unset=NO_SOURCE).stdout))

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)] + \
                  [threading.Thread(target=reader) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert failures == []
        assert sorted(written) == sorted(f"w{w}-{n}" for w in range(3) for n in range(4))
        expected = {s: ("never changes\n" if s == "stable" else f"v-{s}\n") for s, _ in read_back}
        assert [(s, out) for s, out in read_back if out != expected[s]] == []
        listed = kc_ready.ok(["list", "--json"], unset=NO_SOURCE).stdout
        assert all(f'"{s}"' in listed for s in written)
    kc_ready.ok(["check"])


def test_a_listing_in_progress_stops_locked_when_the_max_ttl_passes(kc_ready):
    with running_agent(kc_ready, unlocked=True) as (process, path):
        add_big_items(path)
        listing = agentwire.frame(agentwire.REQUEST["allItems"], agentwire.all_items_body(revealing=True))   # encoded ahead
        # Unlocked again with a max TTL of 3 s (an unlocked agent takes the new timers).
        name, _ = agentwire.request(path, "unlock", agentwire.unlock_body(kc_ready.master_password, max_ttl=3))
        assert name == "done", name
        unlocked_at = time.monotonic()
        sock, connection = slow_reader(path, listing)
        kind, more, _ = connection.read_frame()
        assert (kind, more) == ("items", True), "the listing must start within the max TTL and take several frames"
        # The agent now waits to send the next frame; the max TTL passes meanwhile (well within
        # its 5 s per send).
        time.sleep(max(0.0, unlocked_at + 3.5 - time.monotonic()))
        kinds = []
        while more:
            kind, more, _ = connection.read_frame()
            kinds.append(kind)
        sock.close()
        assert kinds[-1] == "locked", kinds
        process.wait(DEADLINE)   # it locked and exited
    assert kc_ready.run(["status"]).returncode == EXIT_INTERACTION


def test_forty_silent_connections_leave_a_client_served_or_told_the_agent_is_busy(kc_ready):
    """More silent peers than the agent's slots and its listen backlog hold: a client's connect
    waits in the queue, bounded as its wait for the hello is. It is served (a slot frees every
    5 s) or gives up, saying the agent is busy (not stopped), in well under a minute."""
    kc_ready.add_generic("github.com", "me", "hunter2")
    with running_agent(kc_ready, unlocked=True) as (_, path):
        peers, stop = [], threading.Event()

        def silent_peer():
            while not stop.is_set():   # connects again whenever the agent drops it
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(30)
                try:
                    sock.connect(str(path))
                    peers.append(sock)
                    while not stop.is_set() and sock.recv(4096):
                        pass
                except OSError:
                    pass
                finally:
                    sock.close()

        threads = [threading.Thread(target=silent_peer, daemon=True) for _ in range(40)]
        for thread in threads:
            thread.start()
        try:
            time.sleep(1)
            started = time.monotonic()
            result = kc_ready.run(FIND + ["github.com"], unset=NO_SOURCE, timeout=120)
            took = time.monotonic() - started
        finally:
            stop.set()
            for thread in threads:
                thread.join(40)
        assert len(peers) >= 40
        served = result.returncode == 0 and result.stdout == "hunter2\n"
        told_busy = "did not use the agent: the agent is busy: it did not answer within 10 seconds" in result.stderr
        assert served or told_busy, result
        assert took < 45, took
