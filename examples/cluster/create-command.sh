# The documented create command, saved as it was run (pmanifest cluster check reads it as a request;
# positions in findings point into this file).
tg beta clusters create \
  --name my-cluster \
  --region us-central-2 \
  --gpu-type RTX_6000_PCI \
  --cluster-type KUBERNETES \
  --num-gpus 8 \
  --billing-type ON_DEMAND \
  --nvidia-driver-version 570 \
  --cuda-version 12.8 \
  --num-preemptible-gpus 8 \
  --project proj-research-01 \
  --non-interactive --json
