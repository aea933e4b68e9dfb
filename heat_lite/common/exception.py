"""Typed errors of heat_lite, each with the HTTP code the API maps it to.

Every exception takes its values as keyword arguments that are JSON
serializable, so that it survives an oslo.messaging hop: the engine raises
it, the API receives the same class (suffixed ``_Remote``) and one place,
``heat_lite.api.faults``, turns it into Heat's JSON error body. Nothing here
knows about webob or pecan.
"""


class HeatLiteException(Exception):
    """Base class: ``msg_fmt % kwargs`` is the message shown to users."""

    msg_fmt = "An unknown exception occurred."
    code = 500

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError, ValueError):
                message = self.msg_fmt
        self.message = message
        super().__init__(message)

    def __str__(self):
        return self.message


# 400 family ---------------------------------------------------------------
class Invalid(HeatLiteException):
    code = 400
    msg_fmt = "%(message)s"


class BadRequest(Invalid):
    msg_fmt = "%(message)s"


class RequestLimitExceeded(Invalid):
    msg_fmt = "Request limit exceeded: %(message)s"


class TooManySignals(RequestLimitExceeded):
    msg_fmt = (
        "Request limit exceeded: %(name)s keeps %(limit)d signals already "
        "(max_signals_per_handle); a signal with a new id is refused, one "
        "with a known id replaces it"
    )


class StackValidationFailed(Invalid):
    msg_fmt = "%(message)s"

    def __init__(self, message=None, path=None, error=None, **kwargs):
        if message is None:
            inner = kwargs.get("msg", "")
            if path:
                prefix = (
                    path
                    if isinstance(path, str)
                    else ".".join(str(p) for p in path)
                )
                message = "%s%s: %s" % (
                    "%s: " % error if error else "",
                    prefix,
                    inner,
                )
            else:
                message = "%s%s" % ("%s: " % error if error else "", inner)
        super().__init__(message, path=path, error=error, **kwargs)


class InvalidTemplateVersion(Invalid):
    msg_fmt = "The template version is invalid: %(explanation)s"


class InvalidTemplateSection(Invalid):
    msg_fmt = "The template section is invalid: %(section)s"


class InvalidTemplateReference(Invalid):
    msg_fmt = (
        'The specified reference "%(resource)s" (in %(key)s) is incorrect.'
    )


class CircularDependencyException(Invalid):
    msg_fmt = "Circular Dependency Found: %(cycle)s"


class UnknownUserParameter(Invalid):
    msg_fmt = "The Parameter (%(key)s) was not defined in template."


class UserParameterMissing(Invalid):
    msg_fmt = "The Parameter (%(key)s) was not provided."


class TemplateOutputError(Invalid):
    """A template resource's attribute is an output of its child stack
    that could not be resolved (shown as ``output_error`` of the outputs
    that use it, as Heat shows it)."""

    msg_fmt = "Error in %(resource)s output %(attribute)s: %(reason)s"


class ImmutableParameterModified(Invalid):
    msg_fmt = (
        "The following parameters are immutable and may not be "
        "updated: %(keys)s"
    )


class NotSupported(Invalid):
    msg_fmt = "%(feature)s is not supported."


class InvalidVerify(Invalid):
    msg_fmt = "Invalid verify: %(reason)s"


class StackNotVerifying(Invalid):
    msg_fmt = "Stack %(name)s is not verifying: %(reason)s"


class InvalidSelector(Invalid):
    msg_fmt = "Invalid selector: %(reason)s"


class InvalidRollout(Invalid):
    msg_fmt = "Invalid rollout: %(reason)s"


class InvalidPromotion(Invalid):
    msg_fmt = "Invalid promotion: %(reason)s"


class InvalidApp(Invalid):
    msg_fmt = "Invalid app: %(reason)s"


class ResourceTypeUnavailable(Invalid):
    msg_fmt = "The Resource Type (%(type_name)s) is not available."


def feature_disabled(feature, option, group="DEFAULT"):
    """The NotSupported error of a feature an option turns off; the
    message names the option that turns it on."""
    return NotSupported(
        message="%s is not supported: it is disabled on this server (set "
        "%s = true in the [%s] section of the configuration to enable it)."
        % (feature, option, group),
        feature=feature,
    )


class ResourceActionNotSupported(Invalid):
    msg_fmt = "%(action)s is not supported for resource."


class InvalidBreakPointHook(Invalid):
    msg_fmt = "%(message)s"


class InvalidRestrictedAction(Invalid):
    msg_fmt = "%(message)s"


class InvalidMergeStrategyForParam(Invalid):
    msg_fmt = (
        "Invalid merge strategy '%(strategy)s' for parameter '%(param)s'."
    )


class ConflictingMergeStrategyForParam(Invalid):
    msg_fmt = (
        "Conflicting merge strategy '%(strategy)s' for parameter "
        "'%(param)s' in file '%(env_file)s'."
    )


class MissingCredentialError(Invalid):
    msg_fmt = "Missing required credential: %(required)s"


# 401 ----------------------------------------------------------------------
class NotAuthenticated(HeatLiteException):
    code = 401
    msg_fmt = "%(message)s"


# 403 ----------------------------------------------------------------------
class Forbidden(HeatLiteException):
    code = 403
    msg_fmt = "You are not authorized to use %(action)s."


class InvalidTenant(Forbidden):
    msg_fmt = "Searching Tenant %(target)s from Tenant %(actual)s forbidden."


class HostNotAllowed(Forbidden):
    """noauth: a Host that is none of the API's own names (DNS
    rebinding: a web page's name made to resolve to this address)."""

    msg_fmt = (
        "The Host %(host)s is not an address of this API "
        "(auth_strategy=noauth answers its own addresses and "
        "[api] allowed_hosts only)."
    )


class CrossOriginRefused(Forbidden):
    """A state-changing request sent by a page of another origin."""

    msg_fmt = (
        "Cross-origin request refused (CSRF): the Origin %(origin)s is "
        "neither this API's own nor one of [api] allowed_origins."
    )


# 404 family ---------------------------------------------------------------
class NotFound(HeatLiteException):
    code = 404
    msg_fmt = "%(message)s"


class EntityNotFound(NotFound):
    msg_fmt = "The %(entity)s (%(name)s) could not be found."


class StackNotFound(EntityNotFound):
    def __init__(self, message=None, **kwargs):
        kwargs.setdefault("entity", "Stack")
        super().__init__(message, **kwargs)


class SnapshotNotFound(EntityNotFound):
    msg_fmt = (
        "The Snapshot (%(snapshot)s) for Stack (%(stack)s) could not be found."
    )


class ResourceNotFound(EntityNotFound):
    msg_fmt = (
        "The Resource (%(resource_name)s) could not be found "
        "in Stack %(stack_name)s."
    )


class EventNotFound(NotFound):
    msg_fmt = "No event %(event_id)s found"


class OutputNotFound(NotFound):
    msg_fmt = "Specified output key %(key)s not found."


class RolloutNotFound(NotFound):
    msg_fmt = "The Rollout (%(rollout)s) could not be found."


class PromotionNotFound(NotFound):
    msg_fmt = "The Promotion (%(promotion)s) could not be found."


class AppNotFound(NotFound):
    msg_fmt = "The App (%(app)s) could not be found."


class ImageNotFound(NotFound):
    msg_fmt = "The Image (%(image)s) could not be found."


class RetentionDefaultNotFound(NotFound):
    msg_fmt = "The project %(project)s has no retention default."


class BuildNotFound(NotFound):
    msg_fmt = "The Build (%(build)s) could not be found."


class DriftNotDetected(NotFound):
    msg_fmt = "No drift detection has run on stack %(stack_name)s."


# 409 ----------------------------------------------------------------------
class Conflict(HeatLiteException):
    code = 409
    msg_fmt = "%(message)s"


class RPCVersionPinned(Conflict):
    msg_fmt = (
        "%(method)s needs engines that serve %(topic)s RPC %(needed)s; "
        "[upgrade_levels] %(topic)s pins %(cap)s while a rolling upgrade "
        "is under way."
    )


class StackExists(Conflict):
    msg_fmt = "The Stack (%(stack_name)s) already exists."


class ActionInProgress(Conflict):
    msg_fmt = (
        "Stack %(stack_name)s already has an action (%(action)s) in progress."
    )


class UpdateQueueFull(Conflict):
    msg_fmt = (
        "Stack %(stack_name)s already has %(count)s updates queued "
        "(the most [engine] max_queued_updates allows)."
    )


class TraversalNotQueued(Conflict):
    msg_fmt = (
        "Traversal %(traversal)s of stack %(stack_name)s is %(state)s: "
        "only a QUEUED one can be cancelled."
    )


class TraversalNotFound(NotFound):
    msg_fmt = "The Traversal (%(traversal)s) could not be found."


class PlanNotFound(NotFound):
    msg_fmt = "The Plan (%(plan)s) could not be found."


class StalePlan(Conflict):
    """A saved plan whose basis changed (doc/specs/saved_plans.md): as
    CloudFormation's obsolete change set, it can no longer run."""

    msg_fmt = "stale plan: plan %(plan)s of stack %(stack_name)s: %(reason)s"


class PlanExpired(Conflict):
    msg_fmt = (
        "Plan %(plan)s of stack %(stack_name)s expired at %(expires_at)s: "
        "create a new plan."
    )


class PlanAlreadyApplied(Conflict):
    msg_fmt = "Plan %(plan)s of stack %(stack_name)s was already applied."


class DriftDetectionInProgress(Conflict):
    msg_fmt = "Stack %(stack_name)s already has a drift detection running."


class DriftNotCurrent(Conflict):
    msg_fmt = "Drift of stack %(stack_name)s cannot be reverted: %(reason)s"


class RolloutStateConflict(Conflict):
    msg_fmt = "Rollout %(rollout)s is %(status)s: cannot %(action)s it."


class PromotionConflict(Conflict):
    msg_fmt = "Cannot promote: %(reason)s"


class AppExists(Conflict):
    msg_fmt = "The App (%(app)s) already exists."


class AppChanged(Conflict):
    msg_fmt = "The App (%(app)s) was changed meanwhile: read it again."


class ImageRetired(Conflict):
    msg_fmt = (
        "The Image (%(image)s) was retired by heat_lite's image retention "
        "and is being deleted; it cannot be used again."
    )


class DuplicateDelivery(Conflict):
    msg_fmt = "Push %(delivery)s: delivery already received."


class BuildFinished(Conflict):
    msg_fmt = "Build %(build)s is %(status)s: it has finished."


class ImageStoreRefused(Conflict):
    msg_fmt = "The image service refused to delete %(image)s: %(reason)s"


# 413 ----------------------------------------------------------------------
class RequestTooLarge(HeatLiteException):
    code = 413
    msg_fmt = "Request is too large: %(message)s"


class SignalTooLarge(RequestTooLarge):
    msg_fmt = (
        "Request is too large: a signal of %(size)d bytes, more than "
        "max_signal_size (%(limit)d)"
    )


# 415 ----------------------------------------------------------------------
class UnsupportedMediaType(HeatLiteException):
    """A body that is not JSON: browsers send ``text/plain`` or form
    bodies to any origin without asking, but ``application/json`` only
    after a CORS preflight, which this API never grants."""

    code = 415
    msg_fmt = (
        "The request body must be application/json (Content-Type: "
        "%(content_type)s)."
    )


# 429 ----------------------------------------------------------------------
class TooManyRequests(HeatLiteException):
    """Past a rate limit; ``retry_after`` (whole seconds) is sent as the
    answer's ``Retry-After``."""

    code = 429
    msg_fmt = "Too many requests: %(reason)s"

    def __init__(self, retry_after=1, **kwargs):
        super().__init__(**kwargs)
        self.retry_after = retry_after
        self.headers = {"Retry-After": str(retry_after)}


# 503 ----------------------------------------------------------------------
class ServiceUnavailable(HeatLiteException):
    code = 503
    msg_fmt = "%(message)s"


class TrustFailed(ServiceUnavailable):
    """Keystone could not be asked to create or delete a stack's trust."""

    msg_fmt = "%(message)s"


class DatabaseUnavailable(ServiceUnavailable):
    """The engine could not reach its database (restart, failover,
    partition): the request may succeed when retried later."""

    msg_fmt = "The database is unavailable; try again later."


# Engine-internal signals (never reach the API) ----------------------------
class UpdateReplace(Exception):
    """Raised by a plugin's handle_update: "replace me instead"."""

    def __init__(self, resource_name="Unknown"):
        super().__init__(
            "The Resource %s requires replacement." % resource_name
        )


class ResourceFailure(HeatLiteException):
    """A resource action failed; message is Heat's "Type: path: reason"."""

    msg_fmt = "%(exc_type)s: %(path)s: %(reason)s"


class NodeStalled(HeatLiteException):
    """The watchdog re-drove a node up to its limit without progress."""

    msg_fmt = (
        "No progress after %(count)d re-drives (a lost message, or an "
        "engine that cannot run it)"
    )


class ActionAborted(HeatLiteException):
    """A resource action stopped because the user cancelled its traversal
    or deleted the stack."""

    msg_fmt = "%(action)s aborted (user triggered cancel)"


class OperationFailed(HeatLiteException):
    """A resource action stopped because the stack operation it was part
    of failed: another resource failed, or the operation timed out."""

    msg_fmt = "%(action)s aborted: stack %(operation)s failed: %(reason)s"


class ConcurrentTransaction(HeatLiteException):
    """A guarded write lost its race (stale atomic_key or traversal)."""

    msg_fmt = "Concurrent transaction for %(what)s"
