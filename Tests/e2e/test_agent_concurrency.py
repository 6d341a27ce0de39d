"""The agent among other processes: killed at random moments while clients write (nothing
acknowledged is lost, the next agent starts), other processes appending, compacting and changing
the password while it serves, a key rotation, RLIMIT_MEMLOCK=0, and no secret in any process's
argv or environment."""
import os
import random
import resource
import signal
import threading
import time

import agentwire
from procsampler import Sampler
from test_agent_process import running_agent, start_agent

FIND = ["find", "generic", "-w", "-s"]


def unlock(kc, path):
    name, body = agentwire.request(path, "unlock", agentwire.unlock_body(kc.master_password))
    assert name == "done", (name, body)


def agent_secret(path, service):
    name, body = agentwire.request(path, "find", agentwire.find_body(agentwire.query("generic", service=service)))
    return agentwire.first_secret(body) if name == "items" else name


def test_sigkill_at_random_moments_loses_nothing_acknowledged(kc_ready):
    acknowledged = []
    lock = threading.Lock()
    for round_number in range(4):
        process, path = start_agent(kc_ready)
        unlock(kc_ready, path)
        stopped = threading.Event()

        def writer(worker):
            n = 0
            while not stopped.is_set():
                service = f"r{round_number}-w{worker}-{n}"
                try:
                    name, _ = agentwire.request(path, "add", agentwire.add_body("generic", service.encode(), service=service))
                except (OSError, EOFError):
                    return
                if name == "items":
                    with lock:
                        acknowledged.append(service)
                n += 1

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
        for thread in threads:
            thread.start()
        time.sleep(random.uniform(0.05, 0.6))
        process.send_signal(signal.SIGKILL)
        stopped.set()
        for thread in threads:
            thread.join(10)
        process.wait(5)
        assert path.exists(), "SIGKILL leaves the socket file behind: the next agent must cope"
    assert acknowledged, "no write was acknowledged before the kills"
    with running_agent(kc_ready, unlocked=True) as (process, path):
        missing = [s for s in acknowledged if agent_secret(path, s) != s.encode()]
        assert missing == []
    kc_ready.ok(["check"])


def test_other_processes_append_compact_and_change_password_while_the_agent_serves(kc_ready):
    kc_ready.add_generic("before", "me", "one")
    with running_agent(kc_ready, unlocked=True) as (process, path):
        assert agent_secret(path, "before") == b"one"
        kc_ready.add_generic("appended", "me", "two")
        assert agent_secret(path, "appended") == b"two"
        kc_ready.ok(["delete", "generic", "-s", "before"])
        kc_ready.ok(["compact"])
        assert agent_secret(path, "before") == "failure"
        assert agent_secret(path, "appended") == b"two"
        new_password = kc_ready.home / "new-password"
        kc_ready.write_secret_file(new_password, "another password: ember tundra velvet\n")
        kc_ready.ok(["passwd", "--new-password-file", str(new_password)])
        kc_ready.write_secret_file(kc_ready.password_file, "another password: ember tundra velvet\n")
        kc_ready.add_generic("after-passwd", "me", "three")
        assert agent_secret(path, "after-passwd") == b"three"
        name, _ = agentwire.request(path, "add", agentwire.add_body("generic", b"four", service="through-agent"))
        assert name == "items"
        assert kc_ready.ok([*FIND, "through-agent"]).stdout == "four\n"
        assert process.poll() is None


def test_a_key_rotation_by_another_process_locks_the_agent(kc_ready):
    kc_ready.add_generic("item", "me", "one")
    with running_agent(kc_ready, unlocked=True) as (process, path):
        kc_ready.ok(["passwd", "--rotate-key", "--new-password-file", str(kc_ready.password_file)])
        assert process.wait(10) == 0
        assert kc_ready.ok([*FIND, "item"]).stdout == "one\n"


def test_no_memlock_allowance_is_not_fatal(kc_ready):
    kc_ready.add_generic("item", "me", "one")

    def no_memlock():
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))

    with running_agent(kc_ready, preexec_fn=no_memlock, unlocked=True) as (process, path):
        assert agent_secret(path, "item") == b"one"
        assert agent_secret(path, "nothing") == "failure"


def test_no_secret_in_any_argv_or_environment_while_the_agent_serves(kc_ready):
    kc_ready.add_generic("item", "me", "the item secret")
    sampler = Sampler(None, [kc_ready.master_password.encode(), b"the item secret"])
    try:
        with running_agent(kc_ready, unlocked=True) as (_, path):
            for _ in range(20):
                assert agent_secret(path, "item") == b"the item secret"
    finally:
        sampler.stop()
    print(f"{sampler.samples} samples of {Sampler.PLACES}")
    assert sampler.samples > 0
    assert sampler.hits == []
