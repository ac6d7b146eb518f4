"""Operations: Prometheus metrics (metrics.py), systemd notifications (sdnotify.py), and the ops listener with
/healthz, /readyz and /metrics (server.py, live.py). Contract 11 in shared/DESIGN.md."""
