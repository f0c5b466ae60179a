"""Print the CloudFormation template AWS SAM deploys for a SAM template.

Usage: python3 sam_translate.py template.yaml > translated.json
(samtemplate.Translate embeds and runs it.)

It runs the SAM transform (the samtranslator package cfn-lint depends on)
offline: the names of AWS-managed policies a template may use in Policies
come from the copy cfn-lint ships instead of from IAM, and local CodeUri
paths become a placeholder S3 location, as `sam deploy` uploads them.
"""

import json
import os
import sys
from importlib import resources

import cfnlint.data.Serverless
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class BundledManagedPolicies:
    """The managed-policy map of cfn-lint's bundled copy, instead of IAM."""

    def load(self):
        path = resources.files(cfnlint.data.Serverless) / "ManagedPolicies.json"
        return json.loads(path.read_text())


def main(path):
    # The transform asks for a region only to name the partition of the
    # ARNs it writes.
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    with open(path, encoding="utf-8") as f:
        template = yaml_parse(f.read())
    for resource in template.get("Resources", {}).values():
        if resource.get("Type") == "AWS::Serverless::Function":
            resource["Properties"]["CodeUri"] = "s3://bucket/code.zip"
    out = transform(template, {}, BundledManagedPolicies())
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
