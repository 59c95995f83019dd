"""The widgets of the duplicates screen: the cluster list and the cluster being resolved."""
