"""The real `python -m bot run` under a systemd-like supervisor: it announces READY=1 on a real notification
socket once connected, pings WATCHDOG=1 from its loop, answers /readyz 200 and /metrics on its ops port with
the gateway connected (and counts a gateway reconnect and a real command), keeps NOTIFY_SOCKET from its worker
processes, and says STOPPING=1 on SIGTERM."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path

from tests.e2e.botproc import BotProcess
from tests.e2e.conftest import dump_on_failure, start_bots
from tests.fakediscord import FakeDiscord
from tests.procs import descendants


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_ready_watchdog_and_ops_endpoints(tmp_path: Path, e2e_data_dir: Path) -> None:
    fake = FakeDiscord().start()
    port = _free_port()
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(path)
        notify.settimeout(120)  # a bound on each wait
        bot = BotProcess(fake, tmp_path, data=e2e_data_dir, env={
            "NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000", "COGITATOR_OPS_PORT": str(port),
            "COGITATOR_SIM_WORKERS": "1"})
        try:
            start_bots(fake, [bot])
            lines: list[str] = []
            while "READY=1" not in lines:
                lines += notify.recv(4096).decode().split("\n")
            assert "WATCHDOG=1" in lines or notify.recv(4096) == b"WATCHDOG=1", dump_on_failure(bot)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=30) as response:
                body = json.loads(response.read())
            assert body == {"ready": True, "checks": {"discord": True, "store": True, "catalog": True,
                                                      "sim_pool": True}}, dump_on_failure(bot)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
                metrics = response.read().decode()
            assert "cogitator_gateway_shards_connected 1.0" in metrics
            assert 'cogitator_sim_workers_alive{pool="simulation"} 1.0' in metrics
            assert "cogitator_gateway_reconnects_total 0.0" in metrics

            session = fake.drop((0, 1), mode="close")  # Discord closes the gateway: the bot resumes
            fake.wait_until(lambda: session.conn is not None, 30, "a resume after close code 4000")
            record = fake.slash("about")
            assert record.callback is not None and record.callback.type == 4, dump_on_failure(bot)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
                metrics = response.read().decode()
            assert "cogitator_gateway_reconnects_total 1.0" in metrics, dump_on_failure(bot)
            assert 'cogitator_commands_total{command="about",outcome="ok"} 1.0' in metrics
            workers = descendants(bot.pid)
            assert workers, "the forkserver and its workers"
            for child in workers:
                environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
                assert not any(v.startswith((b"NOTIFY_SOCKET=", b"WATCHDOG_USEC=")) for v in environ), child
            bot.proc.send_signal(15)
            while "STOPPING=1" not in lines:
                lines += notify.recv(4096).decode().split("\n")
            assert bot.proc.wait(30) == 0, dump_on_failure(bot)
        finally:
            bot.stop()
            fake.stop()
