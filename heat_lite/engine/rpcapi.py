"""The engine's public RPC client.

Other services (the REST API, or anything else on the message bus) drive
heat_lite through ``EngineAPI``. Calls wait for an answer and re-raise the
engine's typed exceptions; casts return at once.

History of ``RPC_API_VERSION``:

* 1.0 - create_stack, update_stack, delete_stack, identify_stack,
  show_stack, list_stacks, list_stack_resources, describe_stack_resource,
  list_events, list_services, resource_versions, stack_cancel_update,
  validate_template, list_template_versions, list_template_functions,
  stack_action.
* 1.1 - list_stacks takes tag, hidden-tag and global filters;
  count_stacks, preview_stack, preview_update_stack, get_template,
  get_environment, get_files, list_outputs, show_output, export_stack,
  abandon_stack, list_stack_resources takes nested_depth, with_detail
  and filters; resource_metadata, resource_signal,
  resource_mark_unhealthy, show_event, list_resource_types,
  resource_schema, generate_template, get_revision.
* 1.2 - create_stack adopts (``args["adopt_stack_data"]``); abandon_stack
  leaves the physical resources in place (an older engine deleted them,
  so the call is pinned to 1.2); list_stack_resources and list_events
  descend into nested stacks with ``nested_depth``.
* 1.3 - create_software_config, list_software_configs,
  show_software_config, delete_software_config.
* 1.4 - create_stack and update_stack take ``args["verify"]`` (a
  verified operation; pinned to 1.4 when given), stack_verdict,
  query_stacks.
* 1.5 - create_rollout, list_rollouts, show_rollout, delete_rollout,
  rollout_action.
* 1.6 - create_promotion, list_promotions, show_promotion,
  stack_promotions, promotion_action, list_references; show_stack
  carries ``promoted_from``.
* 1.7 - stack_snapshot, stack_list_snapshots, show_snapshot,
  delete_snapshot, stack_restore.
* 1.8 - stack_changes, project_changes (the change marks a polling
  page asks for; ``engine.endpoint.changes``).
* 1.9 - preview_promotion (a promotion's dry run).
* 1.10 - create_software_deployment, list_software_deployments,
  show_software_deployment, update_software_deployment,
  delete_software_deployment, metadata_software_deployments.
* 1.11 - create_app, list_apps, show_app, update_app, delete_app.
* 1.12 - app_webhook, app_push, list_builds, show_build, build_log,
  cancel_build (an app's pushes and builds; ``engine.fleet.app``).
* 1.13 - list_images, show_image, images_dry_run (image retention;
  ``engine.fleet.retention``).
* 1.14 - list_app_image_events (what retention did to an app's
  images).
* 1.15 - detect_drift, show_drift (property-level drift;
  ``engine.drift``).
* 1.16 - list_rollouts and list_promotions take ``limit`` and ``marker``
  (pinned to 1.16 only when a page is asked for).
* 1.17 - list_traversals, cancel_traversal, set_update_semantics (a
  stack's traversal history and queue, its update semantics;
  ``engine.traversal.queue``); create_stack and update_stack take
  ``args["update_semantics"]`` (pinned to 1.17 when given).
* 1.18 - show_retention, set_retention, delete_retention (a project's
  default image retention; ``engine.fleet.retention``).
* 1.19 - create_plan, list_plans, show_plan, apply_plan, delete_plan
  (saved plans of updates; ``engine.endpoint.plans``).
* 1.20 - update_stack and preview_update_stack take
  ``args["revert_drift"]`` (pinned to 1.20 when given);
  preview_update_stack takes ``with_drift`` (the answer's ``drift``: the
  drift report it was computed against; ``engine.drift.revert``).

Every method of ``EngineAPI`` is a ``call``: the caller waits for the
answer (or the engine's typed exception, re-raised here). ``WorkerAPI``
only casts.
"""

from heat_lite import conf
from heat_lite.common import exception, rpc

CONF = conf.CONF
RPC_API_VERSION = "1.20"
# The worker topic has its own history; 1.0 - check_resources; 1.1 -
# detect_drift.
WORKER_API_VERSION = "1.1"
# What a message is sent as unless its method pins more: the oldest
# version that serves it, so that engines of the previous release keep
# serving what a newer API or engine sends them (a rolling upgrade), and
# ``[upgrade_levels]`` caps what may be sent at all.
BASE_VERSION = "1.0"


# Calls that change nothing: given up by the call monitor (no engine
# took them up), they are asked again once.
READS = frozenset(
    {
        "count_stacks",
        "describe_stack_resource",
        "export_stack",
        "generate_template",
        "get_environment",
        "get_files",
        "get_revision",
        "get_template",
        "identify_stack",
        "images_dry_run",
        "list_app_image_events",
        "list_apps",
        "list_builds",
        "build_log",
        "list_events",
        "list_images",
        "show_retention",
        "list_outputs",
        "list_plans",
        "list_promotions",
        "list_references",
        "list_resource_types",
        "list_rollouts",
        "list_services",
        "list_software_configs",
        "list_software_deployments",
        "metadata_software_deployments",
        "stack_list_snapshots",
        "list_stack_resources",
        "list_stacks",
        "list_template_functions",
        "list_traversals",
        "list_template_versions",
        "preview_promotion",
        "preview_stack",
        "preview_update_stack",
        "project_changes",
        "query_stacks",
        "resource_metadata",
        "resource_schema",
        "resource_versions",
        "show_app",
        "show_build",
        "show_event",
        "show_image",
        "show_output",
        "show_plan",
        "show_promotion",
        "show_rollout",
        "show_snapshot",
        "show_software_config",
        "show_software_deployment",
        "show_drift",
        "show_stack",
        "stack_changes",
        "stack_promotions",
        "validate_template",
    }
)


def _paged(version, limit, marker):
    """The version and arguments of a list call that pages since 1.16:
    an unpaged call stays at its first ``version``, so an engine not yet
    upgraded still serves it (a rolling upgrade)."""
    if limit is None and marker is None:
        return {"version": version}
    return {"version": "1.16", "limit": limit, "marker": marker}


class EngineAPI:
    """Client of the engine topic. Every method is a ``call``.

    :param timeout: seconds to wait for an answer (``[api] rpc_timeout``).
    :param monitor_timeout: seconds after which a call no engine works on
        is given up (oslo.messaging's call monitor: the engine working on
        it sends a heartbeat every half of this). RabbitMQ's listener
        acknowledges a call when it reads it, so an engine that exits or
        stalls with one in hand would otherwise leave the caller waiting
        the whole ``timeout``; a read is then asked again, once.
    """

    def __init__(self, timeout=None, monitor_timeout=None):
        self._cap = CONF.upgrade_levels.engine
        self._client = rpc.get_client(
            CONF.engine.topic,
            BASE_VERSION,
            timeout=timeout,
            version_cap=self._cap,
        )
        self._monitor = monitor_timeout

    def _call(self, ctxt, method, version=None, **kwargs):
        options = {"version": version} if version else {}
        if self._monitor:
            options["call_monitor_timeout"] = self._monitor
        client = self._client.prepare(**options)
        try:
            return client.call(ctxt, method, **kwargs)
        except rpc.VersionCapError:
            raise exception.RPCVersionPinned(
                method=method, topic="engine", needed=version, cap=self._cap
            ) from None
        except rpc.MessagingTimeout:
            if method not in READS or not self._monitor:
                raise
            return client.call(ctxt, method, **kwargs)

    def create_stack(
        self,
        ctxt,
        stack_name,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
    ):
        """Validate and store a stack, start creating it (call).

        :returns: the stack identity ``{tenant, stack_name, stack_id,
            path}``; the stack is already CREATE_IN_PROGRESS.
        """
        # Only a 1.2 engine adopts (an older one refuses it anyway), only
        # a 1.4 one verifies (an older one would ignore it).
        version = "1.2" if args.get("adopt_stack_data") is not None else None
        if args.get("verify") is not None:
            version = "1.4"
        if args.get("update_semantics") is not None:
            version = "1.17"
        return self._call(
            ctxt,
            "create_stack",
            version=version,
            stack_name=stack_name,
            template=template,
            params=params,
            files=files,
            environment=environment,
            environment_files=environment_files,
            args=args,
        )

    def update_stack(
        self,
        ctxt,
        stack_identity,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
        existing=False,
    ):
        """Converge the stack onto a new template (call).

        Accepted while another operation runs; the newest wins.
        """
        version = "1.4" if args.get("verify") is not None else None
        if args.get("update_semantics") is not None:
            version = "1.17"
        if args.get("revert_drift"):
            version = "1.20"
        return self._call(
            ctxt,
            "update_stack",
            version=version,
            stack_identity=stack_identity,
            template=template,
            params=params,
            files=files,
            environment=environment,
            environment_files=environment_files,
            args=args,
            existing=existing,
        )

    def stack_verdict(self, ctxt, stack_identity, status, reason=None):
        """Give the stack's running verification a verdict (call).

        :param status: PASS or FAIL.
        :raises StackNotVerifying: if the stack is not verifying or
            waits for no signal.
        """
        return self._call(
            ctxt,
            "stack_verdict",
            version="1.4",
            stack_identity=stack_identity,
            status=status,
            reason=reason,
        )

    def query_stacks(self, ctxt, selector, all_projects=False):
        """The stacks a selector matches, with what matched (call).

        :returns: [{id, stack_name, stack_status, matched}].
        :raises InvalidSelector: on a malformed selector.
        """
        return self._call(
            ctxt,
            "query_stacks",
            version="1.4",
            selector=selector,
            all_projects=all_projects,
        )

    def delete_stack(self, ctxt, stack_identity):
        """Start deleting the stack (call; DELETE_IN_PROGRESS on return)."""
        return self._call(ctxt, "delete_stack", stack_identity=stack_identity)

    def stack_cancel_update(
        self, ctxt, stack_identity, cancel_with_rollback=True
    ):
        """Cancel a running update, rolling back or not (call)."""
        return self._call(
            ctxt,
            "stack_cancel_update",
            stack_identity=stack_identity,
            cancel_with_rollback=cancel_with_rollback,
        )

    def validate_template(
        self,
        ctxt,
        template,
        params,
        files,
        environment,
        environment_files,
        show_nested=False,
    ):
        """Return Heat's validate document for a template (call)."""
        return self._call(
            ctxt,
            "validate_template",
            template=template,
            params=params,
            files=files,
            environment=environment,
            environment_files=environment_files,
            show_nested=show_nested,
        )

    def list_template_versions(self, ctxt):
        """Return the supported template versions (call)."""
        return self._call(ctxt, "list_template_versions")

    def list_template_functions(
        self, ctxt, template_version, with_condition_func=False
    ):
        """Return the functions of a template version (call)."""
        return self._call(
            ctxt,
            "list_template_functions",
            template_version=template_version,
            with_condition_func=with_condition_func,
        )

    def stack_action(self, ctxt, stack_identity, action):
        """Start SUSPEND, RESUME or CHECK of a stack (call)."""
        return self._call(
            ctxt, "stack_action", stack_identity=stack_identity, action=action
        )

    def identify_stack(self, ctxt, stack_name):
        """Return the identity of a stack given its name or id (call)."""
        return self._call(ctxt, "identify_stack", stack_name=stack_name)

    def show_stack(self, ctxt, stack_identity, resolve_outputs=True):
        """Return the stack in Heat's engine format (call)."""
        return self._call(
            ctxt,
            "show_stack",
            stack_identity=stack_identity,
            resolve_outputs=resolve_outputs,
        )

    def list_stacks(self, ctxt, **params):
        """Return the project's stacks (call).

        :param params: ``limit``, ``marker``, ``sort_keys``, ``sort_dir``,
            ``show_deleted``, ``show_nested``, ``show_hidden``,
            ``global_tenant`` (admin contexts: every project), ``filters``
            ({public field name: [values]}), ``tags``, ``tags_any``,
            ``not_tags``, ``not_tags_any`` (lists). 1.1 for the last five.
        :returns: list of stacks in engine format.
        :raises Invalid: for a bad marker or filter value.
        """
        newer = any(
            params.get(k)
            for k in (
                "tags",
                "tags_any",
                "not_tags",
                "not_tags_any",
                "show_hidden",
                "global_tenant",
            )
        )
        return self._call(
            ctxt,
            "list_stacks",
            version="1.1" if newer else None,
            params=params,
        )

    def count_stacks(self, ctxt, **params):
        """Return how many stacks ``list_stacks`` would list without
        ``limit``/``marker`` (call; 1.1)."""
        return self._call(ctxt, "count_stacks", version="1.1", params=params)

    def list_stack_resources(
        self,
        ctxt,
        stack_identity,
        nested_depth=0,
        with_detail=False,
        filters=None,
    ):
        """Return the current record of every resource (call).

        :param nested_depth: levels of nested stacks to include (1.1;
            a 1.1 engine does not descend, a 1.2 one does).
        :param with_detail: add ``description`` and ``attributes`` (1.1).
        :param filters: {name|status|action|type|id|physical_resource_id:
            [values]} (1.1).
        """
        if not (nested_depth or with_detail or filters):
            return self._call(
                ctxt, "list_stack_resources", stack_identity=stack_identity
            )
        return self._call(
            ctxt,
            "list_stack_resources",
            version="1.1",
            stack_identity=stack_identity,
            nested_depth=nested_depth,
            with_detail=with_detail,
            filters=filters,
        )

    def describe_stack_resource(
        self, ctxt, stack_identity, resource_name, with_attr=None
    ):
        """Return one resource with its attributes (call)."""
        return self._call(
            ctxt,
            "describe_stack_resource",
            stack_identity=stack_identity,
            resource_name=resource_name,
            with_attr=with_attr,
        )

    def resource_versions(self, ctxt, stack_identity, resource_name):
        """Return every stored version of a resource (call)."""
        return self._call(
            ctxt,
            "resource_versions",
            stack_identity=stack_identity,
            resource_name=resource_name,
        )

    def list_events(self, ctxt, stack_identity, resource_name=None, **params):
        """Return stack or resource events (call; 1.2 descends into
        nested stacks with ``nested_depth``)."""
        return self._call(
            ctxt,
            "list_events",
            version="1.2" if params.get("nested_depth") else None,
            stack_identity=stack_identity,
            resource_name=resource_name,
            params=params,
        )

    def list_services(self, ctxt):
        """Return the engine services and whether they are up (call)."""
        return self._call(ctxt, "list_services")

    # 1.1 ---------------------------------------------------------------
    def preview_stack(
        self,
        ctxt,
        stack_name,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
    ):
        """Return the stack a create would make, storing nothing (call).

        :returns: the stack in engine format with ``resources``.
        """
        return self._call(
            ctxt,
            "preview_stack",
            version="1.1",
            stack_name=stack_name,
            template=template,
            params=params,
            files=files,
            environment=environment,
            environment_files=environment_files,
            args=args,
        )

    def preview_update_stack(
        self,
        ctxt,
        stack_identity,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
        existing=False,
        show_nested=False,
        with_drift=False,
    ):
        """Return what an update would do to each resource (call).

        :param with_drift: add the answer's ``drift`` (1.20).
        :returns: {added, deleted, replaced, unchanged, updated: [resource
            in engine format, with its ``drift`` if it drifted]} (and
            ``drift``: {state, detected_at, message, revert_drift}).
        """
        # The drift section is extra: an API pinned below 1.20 during a
        # rolling upgrade previews without it.
        with_drift = with_drift and self._client.can_send_version("1.20")
        pinned = with_drift or args.get("revert_drift")
        kwargs = {"with_drift": True} if with_drift else {}
        return self._call(
            ctxt,
            "preview_update_stack",
            version="1.20" if pinned else "1.1",
            **kwargs,
            stack_identity=stack_identity,
            template=template,
            params=params,
            files=files,
            environment=environment,
            environment_files=environment_files,
            args=args,
            existing=existing,
            show_nested=show_nested,
        )

    def get_template(self, ctxt, stack_identity):
        """Return the stack's template as submitted (call)."""
        return self._call(
            ctxt, "get_template", version="1.1", stack_identity=stack_identity
        )

    def get_environment(self, ctxt, stack_identity):
        """Return the stack's environment, hidden values masked (call)."""
        return self._call(
            ctxt,
            "get_environment",
            version="1.1",
            stack_identity=stack_identity,
        )

    def get_files(self, ctxt, stack_identity):
        """Return the stack's files map (call)."""
        return self._call(
            ctxt, "get_files", version="1.1", stack_identity=stack_identity
        )

    def list_outputs(self, ctxt, stack_identity):
        """Return [{output_key, description}] without values (call)."""
        return self._call(
            ctxt, "list_outputs", version="1.1", stack_identity=stack_identity
        )

    def show_output(self, ctxt, stack_identity, output_key):
        """Return one output resolved, with ``output_error`` (call).

        :raises OutputNotFound: for an unknown key.
        """
        return self._call(
            ctxt,
            "show_output",
            version="1.1",
            stack_identity=stack_identity,
            output_key=output_key,
        )

    def export_stack(self, ctxt, stack_identity):
        """Return the stack's abandon data without deleting it (call)."""
        return self._call(
            ctxt, "export_stack", version="1.1", stack_identity=stack_identity
        )

    def abandon_stack(self, ctxt, stack_identity):
        """Return the abandon data and remove the stack tree, leaving
        its physical resources in place (call; 1.2, as a 1.1 engine
        deleted them).

        :raises ActionInProgress: while an operation runs on the tree.
        """
        return self._call(
            ctxt, "abandon_stack", version="1.2", stack_identity=stack_identity
        )

    def resource_metadata(self, ctxt, stack_identity, resource_name):
        """Return the resource's metadata (stored, else the template's)
        (call)."""
        return self._call(
            ctxt,
            "resource_metadata",
            version="1.1",
            stack_identity=stack_identity,
            resource_name=resource_name,
        )

    def resource_signal(self, ctxt, stack_identity, resource_name, details):
        """Deliver a signal to the resource's plugin, synchronously (call).

        :raises ResourceActionNotSupported: if its type takes no signal.
        """
        return self._call(
            ctxt,
            "resource_signal",
            version="1.1",
            stack_identity=stack_identity,
            resource_name=resource_name,
            details=details,
        )

    def resource_mark_unhealthy(
        self,
        ctxt,
        stack_identity,
        resource_name,
        mark_unhealthy,
        resource_status_reason=None,
    ):
        """Set a resource CHECK_FAILED (or back to CHECK_COMPLETE) (call).

        :param resource_name: the name or the physical id.
        """
        return self._call(
            ctxt,
            "resource_mark_unhealthy",
            version="1.1",
            stack_identity=stack_identity,
            resource_name=resource_name,
            mark_unhealthy=mark_unhealthy,
            resource_status_reason=resource_status_reason,
        )

    def show_event(self, ctxt, stack_identity, resource_name, event_id):
        """Return one event with its type and properties (call).

        :raises EventNotFound: if the resource has no such event.
        """
        return self._call(
            ctxt,
            "show_event",
            version="1.1",
            stack_identity=stack_identity,
            resource_name=resource_name,
            event_id=event_id,
        )

    def list_resource_types(
        self,
        ctxt,
        support_status=None,
        type_name=None,
        heat_version=None,
        with_description=False,
    ):
        """Return the installed resource type names (or {resource_type,
        description} dicts) matching the filters (call)."""
        return self._call(
            ctxt,
            "list_resource_types",
            version="1.1",
            support_status=support_status,
            type_name=type_name,
            heat_version=heat_version,
            with_description=with_description,
        )

    def resource_schema(self, ctxt, type_name, with_description=False):
        """Return the properties and attributes schema of a type (call)."""
        return self._call(
            ctxt,
            "resource_schema",
            version="1.1",
            type_name=type_name,
            with_description=with_description,
        )

    def generate_template(self, ctxt, type_name, template_type="cfn"):
        """Return a template using every property of a type (call)."""
        return self._call(
            ctxt,
            "generate_template",
            version="1.1",
            type_name=type_name,
            template_type=template_type,
        )

    def get_revision(self, ctxt):
        """Return the engine's version string (call)."""
        return self._call(ctxt, "get_revision", version="1.1")

    def create_software_config(
        self, ctxt, name, group, config, inputs, outputs, options
    ):
        """Store a software config in the caller's project (call).

        :returns: the config in Heat's engine format.
        :raises StackValidationFailed: for inputs, outputs or options of
            the wrong shape.
        """
        return self._call(
            ctxt,
            "create_software_config",
            version="1.3",
            name=name,
            group=group,
            config=config,
            inputs=inputs,
            outputs=outputs,
            options=options,
        )

    def list_software_configs(self, ctxt, limit=None, marker=None):
        """Return the project's configs, oldest first, as summaries
        (call).

        :raises Invalid: for a marker that is not one of them.
        """
        return self._call(
            ctxt,
            "list_software_configs",
            version="1.3",
            limit=limit,
            marker=marker,
        )

    def show_software_config(self, ctxt, config_id):
        """Return one config (call).

        :raises EntityNotFound: if the project has no such config.
        """
        return self._call(
            ctxt, "show_software_config", version="1.3", config_id=config_id
        )

    def delete_software_config(self, ctxt, config_id):
        """Delete one config (call).

        :raises EntityNotFound: if the project has no such config.
        """
        return self._call(
            ctxt, "delete_software_config", version="1.3", config_id=config_id
        )

    # Software deployments (endpoint.software_deployments) -------------
    def create_software_deployment(
        self,
        ctxt,
        server_id,
        config_id,
        input_values=None,
        action=None,
        status=None,
        status_reason=None,
        stack_user_project_id=None,
    ):
        """Store a deployment of a config to a server (call).

        :returns: the deployment in Heat's engine format.
        :raises Invalid: for a config that is not one of the project's,
            or values of the wrong type or length.
        """
        return self._call(
            ctxt,
            "create_software_deployment",
            version="1.10",
            server_id=server_id,
            config_id=config_id,
            input_values=input_values,
            action=action,
            status=status,
            status_reason=status_reason,
            stack_user_project_id=stack_user_project_id,
        )

    def list_software_deployments(self, ctxt, server_id=None):
        """The deployments the project sees (of one server, when
        given), oldest first (call)."""
        return self._call(
            ctxt,
            "list_software_deployments",
            version="1.10",
            server_id=server_id,
        )

    def show_software_deployment(self, ctxt, deployment_id):
        """One deployment (call).

        :raises NotFound: if the project sees no such deployment.
        """
        return self._call(
            ctxt,
            "show_software_deployment",
            version="1.10",
            deployment_id=deployment_id,
        )

    def metadata_software_deployments(self, ctxt, server_id):
        """The configs of the server's deployments, by config name
        (call)."""
        return self._call(
            ctxt,
            "metadata_software_deployments",
            version="1.10",
            server_id=server_id,
        )

    def update_software_deployment(self, ctxt, deployment_id, **values):
        """Record a deployment's progress (call): ``values`` among
        config_id, input_values, output_values, action, status and
        status_reason.

        :raises NotFound: if the project sees no such deployment.
        :raises Invalid: for values of the wrong type or length.
        """
        return self._call(
            ctxt,
            "update_software_deployment",
            version="1.10",
            deployment_id=deployment_id,
            **values,
        )

    def delete_software_deployment(self, ctxt, deployment_id):
        """Delete a deployment (call).

        :raises NotFound: if the project sees no such deployment.
        """
        return self._call(
            ctxt,
            "delete_software_deployment",
            version="1.10",
            deployment_id=deployment_id,
        )

    # Snapshots (endpoint.snapshots) ------------------------------------
    def stack_snapshot(self, ctxt, stack_identity, name):
        """Start a snapshot of the stack; return it, IN_PROGRESS (call).

        :raises ActionInProgress: (409) while an operation runs on it.
        """
        return self._call(
            ctxt,
            "stack_snapshot",
            version="1.7",
            stack_identity=stack_identity,
            name=name,
        )

    def stack_list_snapshots(self, ctxt, stack_identity):
        """The stack's snapshots, oldest first (call)."""
        return self._call(
            ctxt,
            "stack_list_snapshots",
            version="1.7",
            stack_identity=stack_identity,
        )

    def show_snapshot(self, ctxt, stack_identity, snapshot_id):
        """One snapshot with its data (call).

        :raises SnapshotNotFound: (404).
        """
        return self._call(
            ctxt,
            "show_snapshot",
            version="1.7",
            stack_identity=stack_identity,
            snapshot_id=snapshot_id,
        )

    def delete_snapshot(self, ctxt, stack_identity, snapshot_id):
        """Delete a snapshot and the images it holds (call)."""
        return self._call(
            ctxt,
            "delete_snapshot",
            version="1.7",
            stack_identity=stack_identity,
            snapshot_id=snapshot_id,
        )

    def stack_restore(self, ctxt, stack_identity, snapshot_id):
        """Start restoring the stack to a snapshot (call)."""
        return self._call(
            ctxt,
            "stack_restore",
            version="1.7",
            stack_identity=stack_identity,
            snapshot_id=snapshot_id,
        )

    # Rollouts (engine.fleet) -------------------------------------------
    def create_rollout(self, ctxt, body):
        """Create a rollout and start it (call).

        :param body: the request (``common.rollout_spec``).
        :returns: the rollout dict, with its targets.
        :raises InvalidRollout, InvalidVerify, InvalidSelector: (400) for
            a malformed request or a selector that matches no stack.
        """
        return self._call(ctxt, "create_rollout", version="1.5", body=body)

    def list_rollouts(self, ctxt, limit=None, marker=None):
        """The project's rollouts, newest first, without targets, a page
        at a time when ``limit`` or ``marker`` is given (call)."""
        return self._call(
            ctxt, "list_rollouts", **_paged("1.5", limit, marker)
        )

    def show_rollout(self, ctxt, rollout_id):
        """One rollout with its targets (call).

        :raises RolloutNotFound: if the project has no such rollout.
        """
        return self._call(
            ctxt, "show_rollout", version="1.5", rollout_id=rollout_id
        )

    def delete_rollout(self, ctxt, rollout_id):
        """Delete a finished rollout (call).

        :raises RolloutNotFound: if the project has no such rollout.
        :raises RolloutStateConflict: (409) if it is not finished.
        """
        return self._call(
            ctxt, "delete_rollout", version="1.5", rollout_id=rollout_id
        )

    def rollout_action(self, ctxt, rollout_id, action):
        """Pause, resume, cancel or roll back a rollout (call).

        :returns: the rollout dict.
        :raises RolloutStateConflict: (409) in the wrong state.
        """
        return self._call(
            ctxt,
            "rollout_action",
            version="1.5",
            rollout_id=rollout_id,
            action=action,
        )

    # Promotions (engine.fleet.promotion) -----------------------------
    def create_promotion(self, ctxt, body, target_scope=None):
        """Check a promotion, store it and start it (call).

        :param body: the request (``common.promotion_spec``).
        :param target_scope: keystone mode, a promotion into another
            project: ``{"auth_token", "roles"}`` of the caller's token
            rescoped to that project.
        :returns: the promotion dict.
        :raises StackNotFound: (404) no such source stack.
        :raises PromotionConflict: (409) source not COMPLETE, target busy.
        :raises InvalidPromotion, UnknownUserParameter: (400).
        :raises Forbidden: (403) another project without the right.
        """
        return self._call(
            ctxt,
            "create_promotion",
            version="1.6",
            body=body,
            target_scope=target_scope,
        )

    def preview_promotion(self, ctxt, body, target_scope=None):
        """What ``create_promotion`` with ``body`` would change, changing
        nothing (call).

        :returns: {"source", "target", "template_changed", "parameters",
            "dropped", "resources", "verify"}.
        :raises: what ``create_promotion`` raises before it starts.
        """
        return self._call(
            ctxt,
            "preview_promotion",
            version="1.9",
            body=body,
            target_scope=target_scope,
        )

    def list_promotions(self, ctxt, limit=None, marker=None):
        """The promotions from or into the project, newest first, a page
        at a time when ``limit`` or ``marker`` is given (call)."""
        return self._call(
            ctxt, "list_promotions", **_paged("1.6", limit, marker)
        )

    def show_promotion(self, ctxt, promotion_id):
        """One promotion (call).

        :raises PromotionNotFound: if the project sees no such promotion.
        """
        return self._call(
            ctxt, "show_promotion", version="1.6", promotion_id=promotion_id
        )

    def stack_promotions(self, ctxt, stack_identity):
        """Every promotion that changed the stack, newest first (call)."""
        return self._call(
            ctxt,
            "stack_promotions",
            version="1.6",
            stack_identity=stack_identity,
        )

    def promotion_action(self, ctxt, promotion_id, action):
        """Roll a promotion back (call).

        :raises PromotionConflict: (409) not COMPLETE, or a newer
            promotion changed the target since.
        """
        return self._call(
            ctxt,
            "promotion_action",
            version="1.6",
            promotion_id=promotion_id,
            action=action,
        )

    def list_references(self, ctxt, type_name, prop, all_projects=False):
        """[{value, stacks, current, retained}] of a resource property
        across the project's stacks (every project's: admins) (call)."""
        return self._call(
            ctxt,
            "list_references",
            version="1.6",
            type_name=type_name,
            prop=prop,
            all_projects=all_projects,
        )

    def stack_changes(self, ctxt, stack_identity):
        """{stack_status, stack, resources, events}: the stack's status
        and the change mark of each part of its page (call).

        :raises StackNotFound: (404).
        """
        return self._call(
            ctxt,
            "stack_changes",
            version="1.8",
            stack_identity=stack_identity,
        )

    def project_changes(self, ctxt):
        """{stacks}: the change mark of the caller's project's stacks
        (call)."""
        return self._call(ctxt, "project_changes", version="1.8")

    # 1.11 --------------------------------------------------------------
    def create_app(self, ctxt, body):
        """Store an app (``common.app_spec``) of the caller's project
        (call).

        :raises InvalidApp: (400). :raises AppExists: (409).
        """
        return self._call(ctxt, "create_app", version="1.11", body=body)

    def list_apps(
        self, ctxt, limit=None, marker=None, sort_key=None, sort_dir=None
    ):
        """The caller's project's apps, a page at a time (call)."""
        return self._call(
            ctxt,
            "list_apps",
            version="1.11",
            limit=limit,
            marker=marker,
            sort_key=sort_key,
            sort_dir=sort_dir,
        )

    def show_app(self, ctxt, app):
        """The app whose id or name is ``app`` (call).

        :raises AppNotFound: (404).
        """
        return self._call(ctxt, "show_app", version="1.11", app=app)

    def update_app(self, ctxt, app, body):
        """Lay ``body`` over the app (call).

        :raises AppChanged: (409) if it changed meanwhile.
        """
        return self._call(
            ctxt, "update_app", version="1.11", app=app, body=body
        )

    def delete_app(self, ctxt, app):
        """Soft-delete the app (call)."""
        return self._call(ctxt, "delete_app", version="1.11", app=app)

    # 1.12 --------------------------------------------------------------
    def app_webhook(self, ctxt, app, headers, body):
        """A git server's push delivery to the app ``app`` of the URL's
        project, authenticated by the engine (call).

        :param headers: the headers ``apps.webhook`` reads, lowercase.
        :param body: the raw body, base64.
        :returns: {"build": ...} or {"ignored": reason}.
        :raises WebhookUnauthenticated: (401) forged, or no such app.
        :raises WebhookMalformed: (400). :raises DuplicateDelivery: (409).
        """
        return self._call(
            ctxt,
            "app_webhook",
            version="1.12",
            app=app,
            headers=headers,
            body=body,
        )

    def app_push(self, ctxt, app, ref, commit, delivery_id=None):
        """A push of ``ref`` to ``commit`` by an authenticated caller
        (call).

        :returns: {"build": ...} or {"ignored": reason}.
        :raises AppNotFound: (404). :raises WebhookMalformed: (400).
        :raises DuplicateDelivery: (409) a repeated ``delivery_id``.
        """
        return self._call(
            ctxt,
            "app_push",
            version="1.12",
            app=app,
            ref=ref,
            commit=commit,
            delivery_id=delivery_id,
        )

    def list_builds(
        self, ctxt, app, branch=None, status=None, limit=None, marker=None
    ):
        """The app's builds, newest first (call)."""
        return self._call(
            ctxt,
            "list_builds",
            version="1.12",
            app=app,
            branch=branch,
            status=status,
            limit=limit,
            marker=marker,
        )

    def show_build(self, ctxt, app, build):
        """The build with its whole chain (call).

        :raises AppNotFound, BuildNotFound: (404).
        """
        return self._call(
            ctxt, "show_build", version="1.12", app=app, build=build
        )

    def build_log(self, ctxt, app, build, offset=0):
        """{"log", "next_offset"}: the build's log from ``offset`` (call)."""
        return self._call(
            ctxt,
            "build_log",
            version="1.12",
            app=app,
            build=build,
            offset=offset,
        )

    def cancel_build(self, ctxt, app, build):
        """Cancel the build (call).

        :raises BuildFinished: (409) if it has finished.
        """
        return self._call(
            ctxt, "cancel_build", version="1.12", app=app, build=build
        )

    # 1.13 --------------------------------------------------------------
    def list_images(
        self, ctxt, app=None, state=None, unused=False, limit=None, marker=None
    ):
        """The project's images heat_lite built, each with what keeps it
        (call)."""
        return self._call(
            ctxt,
            "list_images",
            version="1.13",
            app=app,
            state=state,
            unused=unused,
            limit=limit,
            marker=marker,
        )

    def show_image(self, ctxt, image_id):
        """One image and why it is kept (call).

        :raises ImageNotFound: (404).
        """
        return self._call(
            ctxt, "show_image", version="1.13", image_id=image_id
        )

    def images_dry_run(self, ctxt):
        """What the next retention pass would do to the project's images;
        nothing changes (call)."""
        return self._call(ctxt, "images_dry_run", version="1.13")

    # 1.14 --------------------------------------------------------------
    def list_app_image_events(self, ctxt, app, limit=None, marker=None):
        """What retention did to the images of app ``app``, newest first
        (call).

        :raises AppNotFound: (404).
        """
        return self._call(
            ctxt,
            "list_app_image_events",
            version="1.14",
            app=app,
            limit=limit,
            marker=marker,
        )

    # 1.15 --------------------------------------------------------------
    def detect_drift(self, ctxt, stack_identity):
        """Start a drift detection of the stack (call; the detection runs
        on a worker).

        :raises StackNotFound: (404). :raises ActionInProgress,
            DriftDetectionInProgress: (409).
        """
        return self._call(
            ctxt,
            "detect_drift",
            version="1.15",
            stack_identity=stack_identity,
        )

    def show_drift(self, ctxt, stack_identity):
        """The stack's last drift report (call).

        :raises StackNotFound, DriftNotDetected: (404).
        """
        return self._call(
            ctxt, "show_drift", version="1.15", stack_identity=stack_identity
        )

    # 1.17 --------------------------------------------------------------
    def list_traversals(self, ctxt, stack_identity):
        """The stack's running, queued and recent traversals (call).

        :raises StackNotFound: (404).
        """
        return self._call(
            ctxt,
            "list_traversals",
            version="1.17",
            stack_identity=stack_identity,
        )

    def cancel_traversal(self, ctxt, stack_identity, traversal_id):
        """Cancel a queued update of the stack (call).

        :raises StackNotFound, TraversalNotFound: (404).
        :raises TraversalNotQueued: (409).
        """
        return self._call(
            ctxt,
            "cancel_traversal",
            version="1.17",
            stack_identity=stack_identity,
            traversal_id=traversal_id,
        )

    def set_update_semantics(self, ctxt, stack_identity, semantics):
        """Set the stack's update semantics (call).

        :raises StackNotFound: (404). :raises Invalid: (400).
        """
        return self._call(
            ctxt,
            "set_update_semantics",
            version="1.17",
            stack_identity=stack_identity,
            semantics=semantics,
        )

    # 1.18 --------------------------------------------------------------
    def show_retention(self, ctxt):
        """The project's default image retention, the ``[retention]``
        options and the policy an app without its own gets (call)."""
        return self._call(ctxt, "show_retention", version="1.18")

    def set_retention(self, ctxt, retention):
        """Set the project's whole default image retention (call).

        :raises Invalid: (400).
        """
        return self._call(
            ctxt, "set_retention", version="1.18", retention=retention
        )

    def delete_retention(self, ctxt):
        """Unset the project's default image retention (call).

        :raises RetentionDefaultNotFound: (404).
        """
        return self._call(ctxt, "delete_retention", version="1.18")

    # 1.19 --------------------------------------------------------------
    def create_plan(
        self,
        ctxt,
        stack_identity,
        template,
        params,
        files,
        environment,
        environment_files,
        args,
        existing=False,
    ):
        """Preview an update and save it as a plan (call).

        :returns: the plan with ``resource_changes`` (the preview).
        """
        return self._call(
            ctxt,
            "create_plan",
            version="1.19",
            stack_identity=stack_identity,
            template=template,
            params=params,
            files=files,
            environment=environment,
            environment_files=environment_files,
            args=args,
            existing=existing,
        )

    def list_plans(self, ctxt, stack_identity, limit=None, marker=None):
        """The stack's saved plans, newest first, a page at a time
        (call)."""
        return self._call(
            ctxt,
            "list_plans",
            version="1.19",
            stack_identity=stack_identity,
            limit=limit,
            marker=marker,
        )

    def show_plan(self, ctxt, stack_identity, plan_id):
        """One saved plan with its changes (call).

        :raises PlanNotFound: (404).
        """
        return self._call(
            ctxt,
            "show_plan",
            version="1.19",
            stack_identity=stack_identity,
            plan_id=plan_id,
        )

    def apply_plan(self, ctxt, stack_identity, plan_id):
        """Start the plan's update (call).

        :raises StalePlan, PlanExpired, PlanAlreadyApplied: (409).
        """
        return self._call(
            ctxt,
            "apply_plan",
            version="1.19",
            stack_identity=stack_identity,
            plan_id=plan_id,
        )

    def delete_plan(self, ctxt, stack_identity, plan_id):
        """Delete a saved plan (call)."""
        return self._call(
            ctxt,
            "delete_plan",
            version="1.19",
            stack_identity=stack_identity,
            plan_id=plan_id,
        )


class WorkerAPI:
    """Client of the worker topic: resource checks, always cast."""

    def __init__(self):
        self._cap = CONF.upgrade_levels.worker
        self._client = rpc.get_client(
            CONF.engine.worker_topic, BASE_VERSION, version_cap=self._cap
        )

    def _cast(self, ctxt, method, version=None, **kwargs):
        options = {"version": version} if version else {}
        try:
            self._client.prepare(**options).cast(ctxt, method, **kwargs)
        except rpc.VersionCapError:
            raise exception.RPCVersionPinned(
                method=method, topic="worker", needed=version, cap=self._cap
            ) from None

    def check_resources(self, ctxt, stack_id, traversal, nodes):
        """Ask any worker to run graph ``nodes`` of ``traversal`` (cast).

        :param nodes: [[entity_id, phase], ...].
        """
        self._cast(
            ctxt,
            "check_resources",
            stack_id=stack_id,
            traversal=traversal,
            nodes=nodes,
        )

    def detect_drift(self, ctxt, stack_id, detection):
        """Ask any worker to run drift detection ``detection`` of the
        stack (cast; ``engine.drift.detect``)."""
        self._cast(
            ctxt,
            "detect_drift",
            version="1.1",
            stack_id=stack_id,
            detection=detection,
        )
