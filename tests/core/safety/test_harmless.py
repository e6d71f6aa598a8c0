"""Help, version, dry-run and simulation options: harmless per program, as the program reads them."""

from __future__ import annotations

import pytest

from workbench.core.safety import analyze_command


@pytest.mark.parametrize(
    "command",
    [
        "rm --help",
        "rm --version",
        "rm -rf --help",
        "shred --help",
        "dd --help",
        "mkfs.ext4 --help",
        "git clean -n",
        "git clean -fn",
        "git clean -fdx --dry-run",
        "git clean -h",
        "git push -n --force origin main",
        "git push --force --help",
        "git rm -n -r docs",
        "git rm --cached secrets.env",
        "git reflog expire --dry-run --expire=now --all",
        "rsync -avn --delete src/ dst/",
        "rsync -a --delete --dry-run src/ dst/",
        "kubectl delete pod web-1 --dry-run=client",
        "kubectl delete -f k8s/ --dry-run=server",
        "kubectl delete --help",
        "kubectl -n prod delete pod -h",
        "helm uninstall web --dry-run",
        "terraform plan -destroy",
        "terraform destroy -help",
        "apt-get -s remove nginx",
        "sudo apt-get --simulate purge nginx",
        "dnf remove nginx --assumeno",
        "npm uninstall lodash --dry-run",
        "rclone purge remote:bucket -n",
        "aws s3 rm s3://bucket/ --recursive --dryrun",
        "aws ec2 terminate-instances --instance-ids i-1 --dry-run",
        "aws s3 rm help",
        "docker system prune --help",
        "gcloud compute instances delete --help",
        "gh repo delete --help",
        "pip uninstall --help",
        "Remove-Item -Recurse build -WhatIf",
        "make -n clean",
        "dropdb --help",
        "python manage.py flush --help",
        "rails db:drop --help",
        "npx prisma migrate reset --help",
        "php artisan migrate:fresh --help",
        "heroku apps:destroy --help",
        "flyway clean -?",
    ],
)
def test_harmless_options(command: str) -> None:
    verdict = analyze_command(command)
    assert not verdict.dangerous, (command, verdict.reasons)


@pytest.mark.parametrize(
    "command",
    [
        "rm -n important.txt",  # rm has no dry run
        "rm -rf build --help",  # after an operand: a BSD rm deletes build and a file --help
        "rm -rf build -- --help",
        "sed -n -i 's/a/b/p' conf.ini",  # sed -n is not a dry run
        "kubectl delete pod web-1 --dry-run=none",
        "kubectl exec pod -- rm -rf /data --dry-run",  # the option is the inner command's
        "docker exec web rm -rf /data --help",
        "git clean -fd",
        "rsync -av --delete src/ dst/",
        "terraform apply -destroy",
        "terraform destroy -target=aws_instance.web",
        "apt-get -y remove nginx",
        "curl -X DELETE -d --help https://api.example.com/x",
        "helm uninstall web --dry-run=none",
        "bash -c 'rm -rf build' --help",  # --help is the script's $0
        "python3 -c \"import shutil; shutil.rmtree('b')\" --help",
        # a git setting can make even `git help` run a program (the man viewer)
        "git -c man.viewer=x -c man.x.cmd='rm -rf /' log --help",
        'make -n -f - <<< "all:\\n\\t+rm f"',  # make -n still runs `+` lines
    ],
)
def test_options_that_are_not_harmless(command: str) -> None:
    assert analyze_command(command).dangerous, command
