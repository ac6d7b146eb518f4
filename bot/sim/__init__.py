"""The combat simulation feature: requests from datasheets/profiles, and the service that runs the engine.

`service` runs engine work off the event loop with limits, in the worker processes of `pool` (`worker` is
their side); `requests` turns datasheets and options into engine requests, `profiles` parses the ad-hoc
profile strings of /sim custom.
"""
