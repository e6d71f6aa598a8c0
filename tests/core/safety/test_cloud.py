"""Hosting and cloud CLIs by their command path; HTTP clients by the method they send."""

from __future__ import annotations

import pytest

from workbench.core.safety import Severity, analyze_command


@pytest.mark.parametrize(
    "command",
    [
        "gh repo delete owner/repo --yes",
        "gh release delete v1.0 -y",
        "aws s3 rb s3://bucket --force",
        "aws --region eu-west-1 s3 rm s3://bucket/logs/ --recursive",
        "aws rds delete-db-instance --db-instance-identifier prod",
        "aws s3 sync . s3://bucket --delete",
        "gcloud --project p compute instances delete vm-1",
        "gcloud storage rm -r gs://bucket",
        "az group delete --name rg --yes",
        "kubectl -n prod delete deployment web",
        "kubectl drain node-1 --ignore-daemonsets",
        "kubectl scale deploy/web --replicas=0",
        "kubectl exec pod -- rm -rf /data",
        "heroku apps:destroy --app myapp --confirm myapp",
        "heroku pg:reset DATABASE_URL --confirm myapp",
        "heroku run rm -rf /app/data",
        "fly apps destroy myapp",
        "helm delete my-release",
        "terraform destroy",
        "terraform state rm aws_instance.web",
        "pulumi destroy --yes",
        "doctl compute droplet delete web-1",
        "eksctl delete cluster --name prod",
        "vagrant destroy -f",
        "npx rimraf dist",
    ],
)
def test_resource_deletion_asks(command: str) -> None:
    assert analyze_command(command).dangerous, command


@pytest.mark.parametrize(
    "command",
    [
        "gh repo view",
        "gh pr list",
        "aws s3 ls s3://bucket",
        "aws ec2 describe-instances --filters Name=tag:Name,Values=delete-me",
        "aws logs filter-log-events --log-group-name g --filter-pattern delete",
        "gcloud compute instances list",
        "kubectl get pods -l app=delete-worker",
        "kubectl logs job/delete-old-reports",
        "kubectl apply -f k8s/",
        "kubectl scale deploy/web --replicas=3",
        "helm template web ./chart",
        "terraform validate",
        "pulumi preview",
        "heroku logs --tail -a myapp",
        "docker run --rm alpine echo hi",
    ],
)
def test_reading_and_deploying_pass(command: str) -> None:
    verdict = analyze_command(command)
    assert not verdict.dangerous, (command, verdict.reasons)


@pytest.mark.parametrize(
    "command",
    [
        "curl -X DELETE https://api.example.com/v1/users/42",
        "curl -XDELETE localhost:9200/logs-2024",
        "curl --request DELETE https://api.github.com/repos/o/r",
        "curl -X delete https://api.example.com/items/1",
        "http DELETE https://api.example.com/items/7",
        "xh delete https://api.example.com/items/7",
        "wget --method=DELETE https://api.example.com/items/7",
        "gh api -X DELETE repos/owner/repo/branches/main/protection",
        "gh api --method DELETE /repos/o/r/hooks/1",
        "python3 -c \"import requests; requests.delete('https://api.example.com/items/1')\"",
        "node -e \"fetch('https://api.example.com/x', {method: 'DELETE'})\"",
    ],
)
def test_http_delete_asks(command: str) -> None:
    verdict = analyze_command(command)
    assert verdict.dangerous and verdict.severity >= Severity.NORMAL, command


@pytest.mark.parametrize(
    "command",
    [
        "curl -X GET https://api.example.com/items",
        'curl -X POST -d \'{"name": "x"}\' https://api.example.com/items',
        'curl -H "X-Action: DELETE" https://api.example.com/items',
        "curl https://api.example.com/delete-requests",
        "curl -d 'method=DELETE' https://api.example.com/form",
        "http GET api.example.com/items",
        "gh api repos/o/r",
    ],
)
def test_other_requests_pass(command: str) -> None:
    verdict = analyze_command(command)
    assert not verdict.dangerous, (command, verdict.reasons)


@pytest.mark.parametrize(
    "command",
    [
        'curl -X "$(echo DELETE)" https://api.example.com/items/1',
        'curl --request "$M" https://api.example.com/items/1',
        "curl -X$(cat method) https://api.example.com/items/1",
        'curl "-X$M" https://api.example.com/items/1',
        "curl --request=$M https://api.example.com/items/1",
        "wget --method=$(echo DELETE) https://api.example.com/items/1",
        'wget --method "$M" https://api.example.com/items/1',
        "http $(echo DELETE) https://api.example.com/items/1",
        'xh "$M" https://api.example.com/items/1',
        "http --auth u:p $M api.example.com/items/1",
        'gh api -X "$M" /repos/o/r/hooks/1',
    ],
)
def test_a_method_computed_at_run_time_is_not_understood(command: str) -> None:
    verdict = analyze_command(command)
    assert verdict.dangerous and verdict.opaque, (command, verdict.reasons)
    assert verdict.severity is Severity.HIGH


def test_a_method_the_command_assigns_is_read() -> None:
    deleting = analyze_command('M=DELETE; curl --request "$M" https://api.example.com/items/1')
    assert deleting.dangerous and not deleting.opaque, deleting.reasons
    assert not analyze_command('M=GET; curl -X "$M" https://api.example.com/items').dangerous


@pytest.mark.parametrize(
    "command",
    [
        'curl "$URL"',
        'curl -s -H "Authorization: Bearer $TOKEN" https://api.example.com/items',
        'curl -X GET "$URL"',
        'http "$URL"',
        "wget $(cat url.txt)",
    ],
)
def test_a_computed_url_or_header_is_not_a_computed_method(command: str) -> None:
    verdict = analyze_command(command)
    assert not verdict.dangerous, (command, verdict.reasons)
