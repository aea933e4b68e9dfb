"""heat_lite's openstackclient plugin: the commands for what Heat's API
does not have (stack queries, rollouts, promotions, references,
verdicts, verified updates).

python-heatclient registers ``openstack stack ...`` under the
``openstack.orchestration.v1`` entry point group; openstackclient loads
every entry point of that group, whichever distribution ships it, so the
commands here sit next to heatclient's and use the same client
(``client_manager.orchestration``: its session, its endpoint from the
catalog or ``--os-endpoint``). The ``--verify-*`` options of heatclient's
own ``stack create`` / ``stack update`` are a cliff command hook
(``openstack.cli.stack_update``), not a replacement of those commands.

This package is a distribution of its own, heat-lite-client (``pip
install ./client``): it talks to heat_lite over HTTP only, imports
nothing of the server (``heat_lite``) and needs none of its
dependencies; only openstackclient imports it.
"""
