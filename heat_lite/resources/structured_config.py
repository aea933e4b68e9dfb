"""OS::Heat::StructuredConfig and OS::Heat::StructuredDeployment.

A structured config is a software config whose ``config`` is a map (for
tools that read YAML or JSON, e.g. cfn-init metadata); it is stored and
shown as parsed JSON. A structured deployment deploys it as a software
deployment does, substituting each ``{get_input: <name>}`` in the config
with the value of that input (``input_key`` names another function when
``get_input`` must pass through); with ``input_values_validate: STRICT``
an input without a value fails the deployment.
"""

from heat_lite.common import exception
from heat_lite.resources import constraints as c
from heat_lite.resources import properties as p
from heat_lite.resources import software_config, software_deployment


class StructuredConfig(software_config.SoftwareConfig):
    """A software config whose ``config`` is a map."""

    properties_schema = dict(
        software_config.SoftwareConfig.properties_schema,
        config=p.Schema(
            p.MAP,
            "Map representing the configuration data structure which will "
            "be serialized to JSON format.",
        ),
    )


def substitute(snippet, inputs, input_key="get_input", strict=False):
    """``snippet`` with every ``{input_key: name}`` replaced by
    ``inputs[name]`` (None for an unknown name, unless ``strict``).

    :raises UserParameterMissing: for an unknown name when ``strict``.
    """
    if isinstance(snippet, dict):
        if len(snippet) == 1:
            key, name = next(iter(snippet.items()))
            if key == input_key and isinstance(name, str):
                if strict and name not in inputs:
                    raise exception.UserParameterMissing(key=name)
                return inputs.get(name)
        return {
            k: substitute(v, inputs, input_key, strict)
            for k, v in snippet.items()
        }
    if isinstance(snippet, list):
        return [substitute(v, inputs, input_key, strict) for v in snippet]
    return snippet


class StructuredDeployment(software_deployment.SoftwareDeployment):
    """A software deployment that substitutes its inputs into a
    structured config."""

    properties_schema = dict(
        software_deployment.SoftwareDeployment.properties_schema,
        input_key=p.Schema(
            p.STRING,
            "Name of key to use for substituting inputs during deployment.",
            default="get_input",
        ),
        input_values_validate=p.Schema(
            p.STRING,
            "Perform a check on the input values passed to verify that "
            "each required input has a corresponding value. When the "
            "property is set to STRICT and no value is passed, an "
            "exception is raised.",
            default="LAX",
            constraints=[c.AllowedValues(["LAX", "STRICT"])],
        ),
    )

    def derived_config(self, action, source):
        derived = super().derived_config(action, source)
        inputs = {i["name"]: i.get("value") for i in derived["inputs"]}
        derived["config"] = substitute(
            source.get("config") or {},
            inputs,
            self.properties.get("input_key") or "get_input",
            self.properties.get("input_values_validate") == "STRICT",
        )
        return derived
