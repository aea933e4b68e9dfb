"""A highly available substrate for heat_lite on one machine.

``python -m tools.ha WHAT up|down|status --dir DIR`` (WHAT: net, rabbitmq,
patroni, galera, hosts, all). See README.rst, "heat_lite on a highly
available substrate", for what runs where.
"""
